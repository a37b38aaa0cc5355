export * from './url-seen.module';
export * from './url-seen.service';
