export * from './content-seen.module';
export * from './content-seen.service';
