export * from './robots-policy';
export * from './robots-url';
export * from './product-token';
export * from './robots-cache';
export * from './robots-retry';
