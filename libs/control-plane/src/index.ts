export * from './control-plane.module';
export * from './crawl-control.service';
export * from './crawl-monitor.service';
export * from './pipeline-stages';
export * from './seed-list';
export * from './url-lookup.service';
export * from './dead-letters.service';
export * from './host-overrides.service';
