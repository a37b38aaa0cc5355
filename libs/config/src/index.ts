export * from './crawler-config';
