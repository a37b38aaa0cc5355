export * from './runtime.module';
export * from './runtime.tokens';
export * from './crawl-stats.service';
export * from './pipeline.service';
export * from './completion-probe.service';
export * from './circuit-breaker';
export * from './bootstrap';
