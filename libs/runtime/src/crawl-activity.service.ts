import { Inject, Injectable } from '@nestjs/common';
import type { FetchOutcome } from '@crawler/contracts';
import { STATE_STORE, StateStore } from '@crawler/state';

/** One failed turn: a fetch error, an HTTP error status, an unresolvable or refused host, an unreachable robots.txt. */
export interface RecentError {
  /** Order of recording, crawl-wide. */
  seq: number;
  at: string;
  url: string;
  host: string;
  /** `fetch` (timeout, reset, refused…), `http` (status ≥ 400), `address` (not resolved or refused), `robots` (robots.txt unreachable). */
  kind: 'fetch' | 'http' | 'address' | 'robots';
  status?: number;
  error?: string;
}

export interface HostActivity {
  host: string;
  /** Requests among the most recent `CrawlActivity.REQUEST_WINDOW` of the whole crawl. */
  requests: number;
}

/**
 * What the dashboard shows of the crawl's recent past, shared by every process through the state store
 * (namespace `activity`): the last errors, and which hosts the last requests went to. Both are rings of
 * fixed size (a hash of slots written at `seq % size`, `seq` from an atomic counter), so they never grow
 * however long the crawl runs and cost two writes per fetch outcome.
 */
@Injectable()
export class CrawlActivity {
  /** Errors kept. */
  static readonly ERROR_WINDOW = 50;
  /** Requests over which the top hosts are counted. */
  static readonly REQUEST_WINDOW = 1000;
  private readonly store: StateStore;

  constructor(@Inject(STATE_STORE) state: StateStore) {
    this.store = state.namespace('activity');
  }

  /** Called once per fetch outcome (by the frontier, which receives them all). */
  async recordOutcome(outcome: FetchOutcome): Promise<void> {
    if (outcome.requested) await this.push('requests', CrawlActivity.REQUEST_WINDOW, () => outcome.host);
    const error = errorOf(outcome);
    if (error) await this.push('errors', CrawlActivity.ERROR_WINDOW, (seq) => JSON.stringify({ seq, at: new Date().toISOString(), ...error }));
  }

  /** Newest first. */
  async recentErrors(limit = CrawlActivity.ERROR_WINDOW): Promise<RecentError[]> {
    const slots = await this.store.hashGetAll('errors');
    return Object.values(slots)
      .flatMap((raw) => {
        try {
          return [JSON.parse(raw) as RecentError];
        } catch {
          return [];
        }
      })
      .sort((a, b) => b.seq - a.seq)
      .slice(0, limit);
  }

  /** Hosts by their share of the most recent requests, busiest first. */
  async topHosts(limit = 10): Promise<HostActivity[]> {
    const counts = new Map<string, number>();
    for (const host of Object.values(await this.store.hashGetAll('requests'))) counts.set(host, (counts.get(host) ?? 0) + 1);
    return [...counts]
      .map(([host, requests]) => ({ host, requests }))
      .sort((a, b) => b.requests - a.requests || (a.host < b.host ? -1 : 1))
      .slice(0, limit);
  }

  private async push(ring: string, size: number, value: (seq: number) => string): Promise<void> {
    const seq = await this.store.incr(`${ring}.seq`);
    await this.store.hashSet(ring, String(seq % size), value(seq));
  }
}

function errorOf(o: FetchOutcome): Omit<RecentError, 'seq' | 'at'> | null {
  const base = { url: o.url, host: o.host };
  if (o.kind === 'error') return { ...base, kind: o.requested ? 'fetch' : 'address', error: o.error };
  if (o.kind === 'deferred') return { ...base, kind: 'robots', status: o.status, error: 'robots.txt unreachable: site deferred' };
  // A sitemap that is not there is no error: /sitemap.xml is a guess (SITEMAP_MODE=robots+probe).
  const missingSitemap = o.retry?.kind === 'sitemap' && (o.status === 404 || o.status === 410);
  if (o.kind === 'fetched' && o.status !== undefined && o.status >= 400 && !missingSitemap) return { ...base, kind: 'http', status: o.status };
  return null;
}
