export * from './dns-resolver.module';
export * from './dns-resolver.service';
export * from './address-policy';
export * from './dns-resolver.metrics';
