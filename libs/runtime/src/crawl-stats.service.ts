import { Inject, Injectable } from '@nestjs/common';
import { Registry } from 'prom-client';
import { CRAWLER_CONFIG, type CrawlerConfig } from '@crawler/config';
import { isClusterUrl } from '@crawler/redis';
import { STATE_STORE, StateStore } from '@crawler/state';
import { PeriodicFlush } from './periodic-flush';
import { ScrapedCounter } from './scraped-counter';

/**
 * How often a process adds up what it counted into the shared totals. Shorter than the completion probe's
 * settle time (250 ms), so a job processed just before one reading always shows as progress in the next; not
 * much shorter, since every process of a crawl writes its sums this often (at 100 ms, half a Redis command a page).
 */
export const STATS_FLUSH_MS = 200;

/**
 * Hashes the totals are spread over on a Redis Cluster: every process adds to them every STATS_FLUSH_MS, and
 * one hash would be one hot slot on one master. Each flush goes to the next shard; a reading sums them all.
 * One on a single node: the totals stay the one hash `totals`.
 */
export const CLUSTER_STATS_SHARDS = 16;

/**
 * Crawl totals shared by every process (a hash in the state store), mirrored as a Prometheus counter.
 * Counting is local and immediate; the sums reach the store every STATS_FLUSH_MS in one round trip, not one
 * per event (a page is a dozen events). A process that dies loses at most that long of counts: the totals
 * are statistics, and nothing decides a URL's fate on them.
 */
@Injectable()
export class CrawlStats {
  private readonly store: StateStore;
  private readonly events: ScrapedCounter<'event'>;
  private pending = new Map<string, number>();
  private readonly flusher: PeriodicFlush;
  /** `totals`, then `totals:1` … on a cluster. */
  private readonly shardKeys: string[];
  /** Where the next flush adds; processes start at random shards, so they spread from the first flush. */
  private nextShard: number;

  constructor(@Inject(STATE_STORE) state: StateStore, registry: Registry, @Inject(CRAWLER_CONFIG) config: CrawlerConfig) {
    this.store = state.namespace('stats');
    const shards = isClusterUrl(config.redisUrl) ? CLUSTER_STATS_SHARDS : 1;
    this.shardKeys = Array.from({ length: shards }, (_, i) => (i === 0 ? 'totals' : `totals:${i}`));
    this.nextShard = Math.floor(Math.random() * shards);
    this.events = new ScrapedCounter({
      name: 'crawler_events_total',
      help: 'Crawl events by kind (fetched, stored, duplicate, disallowed, filtered.<reason>, error.<kind>, …)',
      labelNames: ['event'],
      registers: [registry],
    });
    this.flusher = new PeriodicFlush(() => this.write(), STATS_FLUSH_MS);
  }

  count(event: string, by = 1): Promise<void> {
    if (by !== 0) {
      this.events.cell({ event }).n += by;
      this.pending.set(event, (this.pending.get(event) ?? 0) + by);
    }
    return DONE;
  }

  /**
   * The shared totals, this process's latest counts included: every shard read at once, summed. When the
   * counts cannot be written (a full Redis refuses writes, OOM, but still answers reads) they are added to
   * what was read, and wait for a later flush.
   */
  async totals(): Promise<Record<string, number>> {
    const unwritten = await this.flush().then(
      () => new Map<string, number>(),
      () => this.pending,
    );
    const totals: Record<string, number> = {};
    for (const shard of await Promise.all(this.shardKeys.map((key) => this.store.hashGetAll(key)))) {
      for (const [event, value] of Object.entries(shard)) totals[event] = (totals[event] ?? 0) + Number(value);
    }
    for (const [event, by] of unwritten) totals[event] = (totals[event] ?? 0) + by;
    return totals;
  }

  /** Adds what was counted since the last flush to the totals; on failure the counts wait for the next one. */
  flush(): Promise<void> {
    return this.flusher.flush();
  }

  /** Stops the timer and adds the last counts (before the state store closes). */
  close(): Promise<void> {
    return this.flusher.close();
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      const key = this.shardKeys[this.nextShard];
      this.nextShard = (this.nextShard + 1) % this.shardKeys.length;
      await this.store.hashIncrMany(key, batch);
    } catch (error) {
      for (const [event, by] of batch) this.pending.set(event, (this.pending.get(event) ?? 0) + by);
      throw error;
    }
  }
}

const DONE = Promise.resolve();
