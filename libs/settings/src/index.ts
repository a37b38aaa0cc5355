export * from './setting-env';
export * from './validators';
