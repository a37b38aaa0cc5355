export * from './simhash';
export * from './simhash-index';
