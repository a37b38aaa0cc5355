export * from './url-extractor.module';
export * from './url-extractor.service';
