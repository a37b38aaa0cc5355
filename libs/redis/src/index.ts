export * from './redis-client';
export * from './redis-url';
export * from './redis-probe';
export * from './lua-script';
export * from './reply-loss';
