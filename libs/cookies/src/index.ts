export * from './set-cookie';
export * from './cookie-rules';
