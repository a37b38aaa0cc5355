import { Inject, Injectable } from '@nestjs/common';
import { CrawlUrl } from '@crawler/contracts';
import { BloomHasher, bloomParameters, estimatedFalsePositiveRate } from '@crawler/bloom';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { STATE_STORE, StateStore } from '@crawler/state';

/**
 * URL-seen as a Bloom filter whose bits live in the state store (Redis in the distributed shape: shared by
 * every replica, surviving restarts). Test-and-set is one atomic step, so two replicas can never both
 * admit one URL. A false positive loses a URL; the rate is chosen by configuration.
 */
@Injectable()
export class UrlSeenService {
  private readonly store: StateStore;
  private readonly hasher: BloomHasher;
  private readonly params: { bits: number; hashes: number };

  constructor(@Inject(STATE_STORE) state: StateStore, @Inject(CRAWLER_CONFIG) config: CrawlerConfig) {
    this.store = state.namespace('url-seen');
    this.params = bloomParameters(config.seen.expectedUrls, config.seen.falsePositiveRate);
    this.hasher = new BloomHasher(this.params);
  }

  /** The URLs never seen before, each once; all of them are marked seen. */
  async admit(urls: CrawlUrl[]): Promise<CrawlUrl[]> {
    const unique = [...new Map(urls.map((u) => [u.url, u])).values()];
    if (unique.length === 0) return [];
    const alreadySet = await this.store.bitsTestAndSet('bloom', unique.map((u) => this.hasher.offsets(u.url)));
    return unique.filter((_, i) => !alreadySet[i]);
  }

  async fill(): Promise<{ bits: number; hashes: number; bitsSet: number; fillRatio: number; falsePositiveRate: number }> {
    const bitsSet = await this.store.bitCount('bloom');
    return {
      ...this.params,
      bitsSet,
      fillRatio: bitsSet / this.params.bits,
      falsePositiveRate: estimatedFalsePositiveRate(bitsSet, this.params.bits, this.params.hashes),
    };
  }
}
