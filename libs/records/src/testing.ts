// For tests only (`@crawler/records/testing`): a schema or database of their own on the tests' PostgreSQL.
export * from './postgres-test-database';
