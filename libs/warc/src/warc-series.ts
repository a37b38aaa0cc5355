import { hostname } from 'node:os';
import type { ContentStore } from '@crawler/content-store';
import { systemClock, WarcWriter } from './warc-writer';

export interface WarcSeriesSettings {
  /** The crawl's prefix (CRAWLER_PREFIX): first part of every file name. */
  crawl: string;
  /** The crawler's User-Agent: the warcinfo `software` field. */
  software: string;
  rotateBytes: number;
  rotateMs: number;
}

/**
 * The WARC writer of one process, whichever service writes (content-seen for the stored pages, the downloader
 * for every exchange): files named after the crawl, the host and the process, so that replicas writing into
 * one bucket never collide. Failed uploads are told to `onError` (they are retried).
 */
export function warcSeriesWriter(store: ContentStore, settings: WarcSeriesSettings, onError: (error: Error) => void): WarcWriter {
  return new WarcWriter(
    store,
    {
      rotateBytes: settings.rotateBytes,
      rotateMs: settings.rotateMs,
      software: settings.software,
      filenamePrefix: `${settings.crawl}-${hostname().replace(/[^A-Za-z0-9-]/g, '-')}-${process.pid}`,
      onError,
    },
    systemClock,
  );
}
