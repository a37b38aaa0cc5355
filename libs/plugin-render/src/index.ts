export * from './browser-pool';
export * from './render.config';
export * from './render.handler';
export * from './render.plugin';
export * from './renderer';
export * from './script-built';
export * from './subrequest-gate';
