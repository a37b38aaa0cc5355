export * from './downloader.module';
export * from './downloader.service';
export * from './http-fetcher';
