export * from './control-plane.module';
export * from './crawl-control.service';
export * from './seed-list';
