import { Inject, Injectable } from '@nestjs/common';
import type { FetchOutcome } from '@crawler/contracts';
import { STATE_STORE, StateStore } from '@crawler/state';
import { PeriodicFlush } from '@crawler/runtime';

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

/** How often a process writes what it recorded to the shared rings. */
const FLUSH_MS = 250;

/**
 * What the dashboard shows of the crawl's recent past, shared by every process through the state store
 * (namespace `activity`): the last errors, and which hosts the last requests went to. Both are rings of
 * fixed size (a hash of slots written at `seq % size`, `seq` from an atomic counter), so they never grow
 * however long the crawl runs. Outcomes are recorded in memory and written every FLUSH_MS in one round
 * trip (the dashboard is a quarter of a second behind; a process that dies loses that much of it).
 */
@Injectable()
export class CrawlActivity {
  /** Errors kept. */
  static readonly ERROR_WINDOW = 50;
  /** Requests over which the top hosts are counted. */
  static readonly REQUEST_WINDOW = 1000;
  private readonly store: StateStore;
  private requests: string[] = [];
  private errors: Omit<RecentError, 'seq'>[] = [];
  private readonly flusher: PeriodicFlush;

  constructor(@Inject(STATE_STORE) state: StateStore) {
    this.store = state.namespace('activity');
    this.flusher = new PeriodicFlush(() => this.write(), FLUSH_MS);
  }

  /** Called once per fetch outcome (by the frontier, which receives them all). */
  recordOutcome(outcome: FetchOutcome): Promise<void> {
    if (outcome.requested) this.requests.push(outcome.host);
    const error = errorOf(outcome);
    if (error) this.errors.push({ at: new Date().toISOString(), ...error });
    return DONE;
  }

  /** Writes what was recorded since the last flush (kept for the next one when the store fails). */
  flush(): Promise<void> {
    return this.flusher.flush();
  }

  /** Stops the timer and writes the last records (before the state store closes). */
  close(): Promise<void> {
    return this.flusher.close();
  }

  private async write(): Promise<void> {
    const [requests, errors] = [this.requests, this.errors];
    this.requests = [];
    this.errors = [];
    try {
      await Promise.all([
        this.push(
          'requests',
          CrawlActivity.REQUEST_WINDOW,
          requests.map((host) => () => host),
        ),
        this.push(
          'errors',
          CrawlActivity.ERROR_WINDOW,
          errors.map((e) => (seq: number) => JSON.stringify({ seq, ...e })),
        ),
      ]);
    } catch (error) {
      this.requests.unshift(...requests);
      this.errors.unshift(...errors);
      throw error;
    }
  }

  /** Newest first. */
  async recentErrors(limit = CrawlActivity.ERROR_WINDOW): Promise<RecentError[]> {
    await this.flush();
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
    await this.flush();
    const counts = new Map<string, number>();
    for (const host of Object.values(await this.store.hashGetAll('requests'))) counts.set(host, (counts.get(host) ?? 0) + 1);
    return [...counts]
      .map(([host, requests]) => ({ host, requests }))
      .sort((a, b) => b.requests - a.requests || (a.host < b.host ? -1 : 1))
      .slice(0, limit);
  }

  /** Takes as many sequence numbers as there are values (one increment), then writes each in its slot. */
  private async push(ring: string, size: number, values: ((seq: number) => string)[]): Promise<void> {
    if (values.length === 0) return;
    // Only the newest `size` can survive in the ring.
    const kept = values.slice(-size);
    const last = await this.store.incr(`${ring}.seq`, values.length);
    const first = last - kept.length + 1;
    await this.store.hashSetMany(ring, new Map(kept.map((value, i) => [String((first + i) % size), value(first + i)])));
  }
}

const DONE = Promise.resolve();

function errorOf(o: FetchOutcome): Omit<RecentError, 'seq' | 'at'> | null {
  const base = { url: o.url, host: o.host };
  if (o.kind === 'error') return { ...base, kind: o.requested ? 'fetch' : 'address', error: o.error };
  if (o.kind === 'deferred' && deferredByDns(o)) return { ...base, kind: 'address', error: `${o.error}: site deferred` };
  if (o.kind === 'deferred') return { ...base, kind: 'robots', status: o.status, error: `robots.txt unreachable${o.error ? ` (${o.error})` : ''}: site deferred` };
  // A sitemap that is not there is no error: /sitemap.xml is a guess (SITEMAP_MODE=robots+probe).
  const missingSitemap = o.retry?.kind === 'sitemap' && (o.status === 404 || o.status === 410);
  if (o.kind === 'fetched' && o.status !== undefined && o.status >= 400 && !missingSitemap) return { ...base, kind: 'http', status: o.status };
  return null;
}

/**
 * An outcome queued by a version before `cause` existed says so only in its error text (the resolver's
 * "DNS lookup of … failed"): read it there while such outcomes may still wait in the frontier-done queue.
 */
function deferredByDns(o: FetchOutcome): boolean {
  return o.cause === undefined ? o.error?.startsWith('DNS ') === true : o.cause === 'dns';
}
