export * from './downloader.module';
export * from './downloader.service';
export * from './http-fetcher';
export { checkFetchRoutes, FetchRoutes, insecureWarning } from './fetch-routes';
