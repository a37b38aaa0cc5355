export * from './monitor.config';
export * from './monitor-matcher';
export * from './monitor.handler';
export * from './monitor.plugin';
