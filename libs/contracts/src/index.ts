export * from './queues';
export * from './payloads';
export * from './prioritizer';
export * from './services';
