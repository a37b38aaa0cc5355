export * from './linger-batcher';
