export * from './png-validator';
export * from './png.config';
export * from './png.handler';
export * from './png.plugin';
