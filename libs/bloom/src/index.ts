export * from './bloom-estimates';
export * from './bloom-hasher';
export * from './bloom-params';
