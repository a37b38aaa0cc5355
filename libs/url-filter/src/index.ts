export * from './url-filter.module';
export * from './url-filter.service';
export * from './domain-blocklist';
