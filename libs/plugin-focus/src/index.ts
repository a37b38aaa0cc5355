export * from './focus.plugin';
export * from './focus.config';
export * from './focus-learner';
export * from './focus-relevance';
export * from './focus.prioritizer';
