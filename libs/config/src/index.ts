export * from './crawler-config';
export * from './own-ports';
