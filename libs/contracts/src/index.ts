export * from './queues';
export * from './payloads';
