export * from './warc-writer';
export { cdxjLine, cdxTimestamp, mimeOf, sortCdxj, surt } from './cdx';
export type { CdxjEntry } from './cdx';
export { base32, REVISIT_PROFILES, sha1Digest, storedResponseHeaders, WARC_VERSION } from './warc-record';
export type { HttpHeaders, RevisitProfile } from './warc-record';
export { warcSeriesWriter } from './warc-series';
export type { WarcSeriesSettings } from './warc-series';
