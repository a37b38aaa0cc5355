export * from './content-store';
export { assertValidKey, assertValidPrefix } from './content-key';
export { MinioContentStore, parseS3Url } from './minio-content-store.driver';
export type { MinioContentStoreOptions } from './minio-content-store.driver';
export { FsContentStore } from './fs-content-store.driver';
// Test support. Safe to import from production code: jest globals and s3rver are only touched when called.
export { contentStoreContract, collectKeys, INVALID_KEYS } from './content-store.contract';
export { startS3TestServer } from './s3-test-server';
export type { S3TestServer } from './s3-test-server';
export * from './body-staging';
export { MemoryBodyStaging } from './memory-body-staging.driver';
export { BundledBodyStaging } from './bundled-body-staging.driver';
export type { BundledBodyStagingOptions } from './bundled-body-staging.driver';
export * from './page-store';
