export * from './state-store';
export * from './redis-state.driver';
export * from './memory-state.driver';
