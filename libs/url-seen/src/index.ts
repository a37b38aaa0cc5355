export * from './url-seen.module';
export * from './url-seen.service';
export * from './url-seen.metrics';
export * from './seen-set';
export * from './bloom-seen-set';
export * from './exact-seen-set';
export * from './url-seen-room';
