export * from './site-pattern';
export * from './site-rules';
export * from './site-settings-file';
export * from './site-settings.schema';
export * from './seed-cookies';
