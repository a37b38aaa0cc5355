export * from './frontier-store';
export * from './per-ip-allowance';
export * from './frontier-shards';
export * from './memory-frontier-store.driver';
export * from './redis-frontier-store.driver';
export * from './redis-frontier-store.factory';
export * from './sharded-frontier-store.driver';
