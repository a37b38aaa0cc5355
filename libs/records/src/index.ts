export * from './records-store';
export * from './file-records.driver';
export * from './redis-records.driver';
export * from './postgres-records.driver';
export * from './records-errors';
export * from './batching-records.driver';
export { recordsSchemaProblem } from './postgres-migrate';
