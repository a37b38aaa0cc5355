export * from './crawler-config';
export * from './setting-env';
export * from './own-ports';
