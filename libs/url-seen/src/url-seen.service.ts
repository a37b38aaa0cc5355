import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { LingerBatcher } from '@crawler/batching';
import { CrawlUrl } from '@crawler/contracts';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { isClusterUrl } from '@crawler/redis';
import { STATE_STORE, StateStore } from '@crawler/state';
import { BloomSeenSet } from './bloom-seen-set';
import { ExactSeenSet } from './exact-seen-set';
import type { SeenSet, SeenStats } from './seen-set';

/**
 * Bloom shards at least, on a Redis Cluster: its bitmaps spread over the masters (each shard is one key, so
 * one master's memory and one master's CPU) instead of one master holding the whole filter.
 */
export const CLUSTER_BLOOM_SHARDS = 16;
/** A batch's answer while it is being worked out: no answer is a string of '0' and '1' only. */
const CLAIMED = 'claimed';

export interface BatchAdmission {
  /** The batch's new URLs, each once. */
  fresh: CrawlUrl[];
  /** An earlier delivery was cut off before keeping its answer: `fresh` is every URL of the batch. */
  answerLost: boolean;
}

/** Each URL once (the last of its copies, where the first stood). */
function distinct(urls: CrawlUrl[]): CrawlUrl[] {
  return [...new Map(urls.map((u) => [u.url, u])).values()];
}

/** Stored state of another layout than the configured one: the process must not start on it. */
export class UrlSeenLayoutError extends Error {
  constructor(
    readonly recorded: string,
    readonly configured: string,
  ) {
    super(
      `the URL-seen state in this store was written as "${recorded}", but this process is configured for ` +
        `"${configured}": every replica must run with the same URL_SEEN_MODE, URL_SEEN_EXPECTED_URLS and ` +
        'URL_SEEN_FALSE_POSITIVE_RATE; to change them, start from an empty state store (what was seen is forgotten)',
    );
    this.name = 'UrlSeenLayoutError';
  }
}

/** How long a dropped answer waits for others to be dropped with it: an envelope's batches are sent on together. */
const FORGET_LINGER_MS = 5;

/**
 * URL-seen: admits each URL the first time any replica sees it. The structure is a Bloom filter or an exact
 * set of 64-bit fingerprints (`seen.mode`), its state in the state store (Redis in the distributed shape:
 * shared by every replica, surviving restarts), and a URL is marked seen in the same atomic step that tells
 * whether it already was, so two replicas can never both admit one URL.
 */
@Injectable()
export class UrlSeenService implements OnModuleInit {
  readonly mode: SeenStats['mode'];
  private readonly store: StateStore;
  private readonly set: SeenSet;
  /** URL_SEEN_ANSWER_MEMORY_MS: how long a batch's answer outlives a delivery that could not send its URLs. */
  private readonly answerMemoryMs: number;
  /** Resolved once the stored layout is known to match; forgotten on failure, so a lost connection is retried. */
  private layoutChecked?: Promise<void>;
  /** Answers dropped within FORGET_LINGER_MS of each other, dropped together (one command on a node). */
  private readonly forgotten = new LingerBatcher<string>((keys) => this.store.delMany(keys), { lingerMs: FORGET_LINGER_MS, maxItems: 1000 });

  constructor(@Inject(STATE_STORE) state: StateStore, @Inject(CRAWLER_CONFIG) config: CrawlerConfig) {
    this.store = state.namespace('url-seen');
    this.mode = config.seen.mode;
    this.set = seenSetFor(this.store, config);
    this.answerMemoryMs = config.seen.answerMemoryMs;
  }

  /**
   * Refuses to boot on state another configuration wrote (its bits or buckets would mean other URLs). A store
   * that cannot answer now (down, or full: OOM refuses the first write of the layout) does not stop the boot:
   * the first `admit` checks again.
   */
  async onModuleInit(): Promise<void> {
    await this.checkLayout().catch((error: unknown) => {
      if (error instanceof UrlSeenLayoutError) throw error;
    });
  }

  /** What the stored state means: recorded by the first process, checked by every other one. */
  get layout(): string {
    return this.set.layout;
  }

  /** The URLs never seen before, each once; all of them are marked seen. */
  async admit(urls: CrawlUrl[]): Promise<CrawlUrl[]> {
    const unique = distinct(urls);
    if (unique.length === 0) return [];
    await this.checkLayout();
    const alreadySeen = await this.set.testAndAdd(unique.map((u) => u.url));
    return unique.filter((_, i) => !alreadySeen[i]);
  }

  /**
   * `admit` for a batch that may be delivered again: marking is not idempotent (asked again, the batch would
   * find every URL seen and admit none), so its answer is kept under its id for URL_SEEN_ANSWER_MEMORY_MS and a
   * repeat gets the same URLs. The id is claimed before the marking, so a delivery cut off between marking
   * and keeping the answer leaves the claim behind: its repeat cannot know which URLs were new and admits
   * them all (`answerLost`), so that none is lost; the cost is a second fetch of the ones seen before.
   */
  async admitBatch(urls: CrawlUrl[], batchId: string): Promise<BatchAdmission> {
    const unique = distinct(urls);
    if (unique.length === 0) return { fresh: [], answerLost: false };
    const key = `answer:${batchId}`;
    if (!(await this.store.setIfAbsent(key, CLAIMED, this.answerMemoryMs))) {
      const kept = await this.store.get(key);
      if (kept !== null && kept !== CLAIMED) return { fresh: unique.filter((_, i) => kept[i] === '1'), answerLost: false };
      await this.admit(unique);
      await this.store.set(key, '1'.repeat(unique.length), this.answerMemoryMs);
      return { fresh: unique, answerLost: true };
    }
    const fresh = new Set(await this.admit(unique));
    await this.store.set(key, unique.map((u) => (fresh.has(u) ? '1' : '0')).join(''), this.answerMemoryMs);
    return { fresh: unique.filter((u) => fresh.has(u)), answerLost: false };
  }

  /**
   * Drops a batch's kept answer once its URLs are sent on: answers are then kept only for the batches in
   * flight, not for every batch of the crawl. One left behind (a crash before this) expires after URL_SEEN_ANSWER_MEMORY_MS.
   */
  forgetBatch(batchId: string): Promise<void> {
    return this.forgotten.add(`answer:${batchId}`);
  }

  /** How full the structure is. Bloom: a BITCOUNT over the whole filter (every shard) — cache it for frequent callers. */
  stats(): Promise<SeenStats> {
    return this.set.stats();
  }

  private checkLayout(): Promise<void> {
    this.layoutChecked ??= this.recordLayout().catch((error: unknown) => {
      this.layoutChecked = undefined;
      throw error;
    });
    return this.layoutChecked;
  }

  /** Read first: a restart on a full Redis (which refuses every write, OOM) must still boot. */
  private async recordLayout(): Promise<void> {
    const recorded = (await this.store.hashGet('meta', 'layout')) ?? (await this.store.hashSetIfAbsent('meta', 'layout', this.set.layout));
    if (recorded !== null && recorded !== this.set.layout && !this.set.adopt?.(recorded)) throw new UrlSeenLayoutError(recorded, this.set.layout);
  }
}

/** The structure URL_SEEN_MODE configures, over `store` (the `url-seen` namespace). */
export function seenSetFor(store: StateStore, config: CrawlerConfig): SeenSet {
  const { mode, expectedUrls, falsePositiveRate } = config.seen;
  if (mode === 'exact') return new ExactSeenSet(store, expectedUrls);
  return isClusterUrl(config.redisUrl)
    ? new BloomSeenSet(store, expectedUrls, falsePositiveRate, CLUSTER_BLOOM_SHARDS, true)
    : new BloomSeenSet(store, expectedUrls, falsePositiveRate);
}

/** One line for a crawl summary or a log. */
export function describeSeenStats(stats: SeenStats): string {
  const rate = stats.falsePositiveRate === 0 ? '0' : stats.falsePositiveRate.toExponential(1);
  if (stats.mode === 'exact') {
    return `exact: ${stats.urls.toLocaleString('en-US')} URL fingerprints in ${stats.buckets.toLocaleString('en-US')} sets, false-positive rate ${rate}`;
  }
  const mb = (stats.bytes / 1e6).toFixed(1);
  const shards = stats.shards > 1 ? ` in ${stats.shards} shards` : '';
  const urls = Number.isFinite(stats.urls) ? `≈ ${Math.round(stats.urls).toLocaleString('en-US')} URLs` : 'saturated';
  return (
    `bloom: ${urls}, ${(stats.fillRatio * 100).toFixed(2)} % of ${stats.bits.toLocaleString('en-US')} bits set ` +
    `(${mb} MB${shards}, ${stats.hashes} hashes), false-positive rate now ${rate}`
  );
}
