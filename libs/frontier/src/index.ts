export * from './frontier.module';
export * from './frontier.service';
export * from './politeness';
