export * from './logger';
export * from './fetch-log';
