export * from './frontier.module';
export * from './frontier.service';
export * from './politeness';
export * from './prioritizer';
export * from './frontier-entry';
