export * from './dns-resolver.module';
export * from './dns-resolver.service';
// The address rules moved to libs/net (plugins vet addresses too); re-exported for existing callers.
export * from '@crawler/net';
export * from './dns-resolver.metrics';
