export * from './url-filter.module';
export * from './url-filter.service';
export * from './url-filter.rules';
export * from './domain-blocklist';
