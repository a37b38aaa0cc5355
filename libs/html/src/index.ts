export * from './charset-decoder';
export * from './content-hash';
export * from './html-page-parser';
export * from './robots-header';
export * from './sitemap-parser';
