import { Injectable } from '@nestjs/common';
import { Gauge, Registry } from 'prom-client';
import type { SeenStats } from './seen-set';
import { UrlSeenService } from './url-seen.service';

/**
 * How long one reading of URL-seen serves scrapes. A Bloom reading is a BITCOUNT over the whole filter,
 * O(m) inside Redis (18 MB at 10 M URLs and 0.1 %, up to 512 MB): not for every scrape of every replica.
 */
export const URL_SEEN_STATS_MAX_AGE_MS = 30_000;

/** URL-seen's fill as Prometheus gauges, read from the shared state at most every 30 s. */
@Injectable()
export class UrlSeenMetrics {
  private reading?: { at: number; stats: Promise<SeenStats> };

  constructor(
    private readonly seen: UrlSeenService,
    registry: Registry,
  ) {
    const read = () => this.read();
    new Gauge({
      name: 'crawler_url_seen_urls',
      help: 'URLs marked seen by all replicas: the fingerprint count (exact) or the estimate from the fill (bloom)',
      labelNames: ['mode'],
      registers: [registry],
      async collect() {
        const stats = await read();
        this.set({ mode: stats.mode }, stats.urls);
      },
    });
    new Gauge({
      name: 'crawler_url_seen_false_positive_rate',
      help: 'Odds that a URL never seen is taken for seen, now: (bits set / bits)^hashes (bloom) or URLs / 2^64 (exact)',
      labelNames: ['mode'],
      registers: [registry],
      async collect() {
        const stats = await read();
        this.set({ mode: stats.mode }, stats.falsePositiveRate);
      },
    });
    if (seen.mode === 'bloom') {
      new Gauge({
        name: 'crawler_url_seen_fill_ratio',
        help: "Share of the Bloom filter's bits that are set",
        registers: [registry],
        async collect() {
          const stats = await read();
          if (stats.mode === 'bloom') this.set(stats.fillRatio);
        },
      });
    }
  }

  /** The last reading if younger than URL_SEEN_STATS_MAX_AGE_MS (concurrent scrapes share one), else a new one. */
  read(): Promise<SeenStats> {
    const now = Date.now();
    if (!this.reading || now - this.reading.at >= URL_SEEN_STATS_MAX_AGE_MS) {
      const stats = this.seen.stats();
      const reading = { at: now, stats };
      this.reading = reading;
      // A failed reading is not kept: the next scrape tries again (this one reports the error).
      stats.catch(() => {
        if (this.reading === reading) this.reading = undefined;
      });
    }
    return this.reading.stats;
  }
}
