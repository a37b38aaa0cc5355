export * from './redis-client';
export * from './redis-url';
export * from './redis-probe';
