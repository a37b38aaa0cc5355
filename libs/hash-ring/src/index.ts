export * from './downloader-membership';
export * from './hash-ring';
export * from './ring-movement';
