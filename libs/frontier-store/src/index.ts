export * from './frontier-store';
export * from './memory-frontier-store.driver';
export * from './redis-frontier-store.driver';
