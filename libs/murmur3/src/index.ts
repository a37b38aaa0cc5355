export { fmix32 } from './murmur3-mix';
export * from './murmur3-32';
export * from './murmur3x4';
