import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { CrawlUrl } from '@crawler/contracts';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { STATE_STORE, StateStore } from '@crawler/state';
import { BloomSeenSet } from './bloom-seen-set';
import { ExactSeenSet } from './exact-seen-set';
import type { SeenSet, SeenStats } from './seen-set';

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
  /** Resolved once the stored layout is known to match; forgotten on failure, so a lost connection is retried. */
  private layoutChecked?: Promise<void>;

  constructor(@Inject(STATE_STORE) state: StateStore, @Inject(CRAWLER_CONFIG) config: CrawlerConfig) {
    const { mode, expectedUrls, falsePositiveRate } = config.seen;
    this.store = state.namespace('url-seen');
    this.mode = mode;
    this.set = mode === 'exact' ? new ExactSeenSet(this.store, expectedUrls) : new BloomSeenSet(this.store, expectedUrls, falsePositiveRate);
  }

  /** Refuses to boot on state another configuration wrote (its bits or buckets would mean other URLs). */
  onModuleInit(): Promise<void> {
    return this.checkLayout();
  }

  /** What the stored state means: recorded by the first process, checked by every other one. */
  get layout(): string {
    return this.set.layout;
  }

  /** The URLs never seen before, each once; all of them are marked seen. */
  async admit(urls: CrawlUrl[]): Promise<CrawlUrl[]> {
    const unique = [...new Map(urls.map((u) => [u.url, u])).values()];
    if (unique.length === 0) return [];
    await this.checkLayout();
    const alreadySeen = await this.set.testAndAdd(unique.map((u) => u.url));
    return unique.filter((_, i) => !alreadySeen[i]);
  }

  /** How full the structure is. Bloom: one BITCOUNT over the whole filter — cache it for frequent callers. */
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

  private async recordLayout(): Promise<void> {
    const recorded = await this.store.hashSetIfAbsent('meta', 'layout', this.set.layout);
    if (recorded !== null && recorded !== this.set.layout) throw new UrlSeenLayoutError(recorded, this.set.layout);
  }
}

/** One line for a crawl summary or a log. */
export function describeSeenStats(stats: SeenStats): string {
  const rate = stats.falsePositiveRate === 0 ? '0' : stats.falsePositiveRate.toExponential(1);
  if (stats.mode === 'exact') {
    return `exact: ${stats.urls.toLocaleString('en-US')} URL fingerprints in ${stats.buckets.toLocaleString('en-US')} sets, false-positive rate ${rate}`;
  }
  const mb = (stats.bytes / 1e6).toFixed(1);
  const urls = Number.isFinite(stats.urls) ? `≈ ${Math.round(stats.urls).toLocaleString('en-US')} URLs` : 'saturated';
  return (
    `bloom: ${urls}, ${(stats.fillRatio * 100).toFixed(2)} % of ${stats.bits.toLocaleString('en-US')} bits set ` +
    `(${mb} MB, ${stats.hashes} hashes), false-positive rate now ${rate}`
  );
}
