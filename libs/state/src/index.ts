export * from './state-store';
export * from './redis-state.driver';
export * from './memory-state.driver';
export * from './redis-eviction-policy';
export * from './partitioned-hash';
