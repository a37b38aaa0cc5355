export * from './queue-transport';
export * from './bullmq-queue.driver';
export * from './memory-queue.driver';
export * from './infrastructure-error';
export * from './bullmq-keys';
