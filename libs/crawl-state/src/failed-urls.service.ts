import { Inject, Injectable } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { STATE_STORE, StateStore } from '@crawler/state';

/** A URL the crawl gave up on. */
export interface FailedUrl {
  /** Order of recording, crawl-wide (1 = the first URL given up). */
  seq: number;
  /** ISO time it was given up. */
  at: string;
  url: string;
  host: string;
  /** `status-500`, `reset`, `timeout-total`, `tls`… (the last failure's). */
  reason: string;
  /** Requests made for it in all. */
  attempts: number;
  /** The last answer's status, or the last error when there was no answer. */
  status?: number;
  error?: string;
}

export interface FailedUrlList {
  /** URLs given up on since the crawl began (older ones than `kept` are no longer listed). */
  total: number;
  /** How many the record keeps (FRONTIER_FAILED_URLS_KEPT). */
  kept: number;
  /** Newest first. */
  urls: FailedUrl[];
}

/**
 * The URLs the crawl gave up on, with why, shared by every process through the state store (namespace
 * `failed-urls`): the frontier writes, the control plane and the embedded run's summary read. A ring of
 * FRONTIER_FAILED_URLS_KEPT slots (a hash written at `seq % kept`, `seq` from an atomic counter), so it keeps
 * the newest and never grows however many pages fail.
 */
@Injectable()
export class FailedUrls {
  private readonly store: StateStore;
  private readonly kept: number;

  constructor(@Inject(STATE_STORE) state: StateStore, @Inject(CRAWLER_CONFIG) config: CrawlerConfig) {
    this.store = state.namespace('failed-urls');
    this.kept = config.frontier.failedUrlsKept;
  }

  async record(entry: Omit<FailedUrl, 'seq'>): Promise<void> {
    const seq = await this.store.incr('seq');
    const kept = { ...entry, ...(entry.error ? { error: entry.error.slice(0, 500) } : {}) };
    await this.store.hashSet('ring', String(seq % this.kept), JSON.stringify({ seq, ...kept }));
  }

  /** The newest `limit` (of one reason, when named). */
  async list(limit = 100, reason?: string): Promise<FailedUrlList> {
    const [total, slots] = await Promise.all([this.store.get('seq'), this.store.hashGetAll('ring')]);
    const urls = Object.values(slots)
      .flatMap((raw) => {
        try {
          return [JSON.parse(raw) as FailedUrl];
        } catch {
          return [];
        }
      })
      .filter((f) => reason === undefined || f.reason === reason)
      .sort((a, b) => b.seq - a.seq)
      .slice(0, limit);
    return { total: Number(total ?? 0), kept: this.kept, urls };
  }
}
