export * from './crawl-state.module';
export * from './crawl-activity.service';
export * from './hosts-aside.service';
export * from './unreached-hosts.service';
export * from './failed-urls.service';
export * from './pause-switch.service';
export * from './completion-probe.service';
export * from './hub-links.service';
