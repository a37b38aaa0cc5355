export * from './plugin-host.module';
export * from './plugin-registry.service';
