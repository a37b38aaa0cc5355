// For tests only (`@crawler/content-store/testing`): the content-store contract suite and a local S3 server.
export { contentStoreContract, collectKeys, INVALID_KEYS } from './content-store.contract';
export { startS3TestServer } from './s3-test-server';
export type { S3TestServer } from './s3-test-server';
