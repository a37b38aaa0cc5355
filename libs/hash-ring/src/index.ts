export * from './downloader-membership';
export * from './hash-ring';
export * from './murmur3';
export * from './ring-movement';
