export * from './crawler-config';
export * from './setting-env';
