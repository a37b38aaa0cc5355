export * from './content-parser.module';
export * from './content-parser.service';
export * from './parse-page';
