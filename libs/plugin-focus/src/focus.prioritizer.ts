import type { CrawlUrl, Prioritizer } from '@crawler/plugin-sdk';
import type { FocusConfig } from './focus.config';
import { FocusLearner, linkYield, placesOf, PlaceStats, targetShare } from './focus-learner';

/** Places read per batch are kept this many at most between reads (a bound on the frontier's memory). */
const CACHE_LIMIT = 10_000;

/**
 * Orders links by where they were found: a link from a host or path prefix whose links led to relevant
 * pages goes to an early front queue, one from a place that never did to a late one, one from an unknown
 * place in between (the prior). A link into a place whose pages were found relevant is ranked at least by
 * that share, wherever it was found. A share `epsilon` of links gets a random queue instead, so places the
 * learner would never try again still get a chance to prove it wrong. Seeds, redirects, recrawls and
 * sitemaps keep what the frontier chose.
 */
export class FocusPrioritizer implements Prioritizer {
  private readonly cache = new Map<string, { stats: PlaceStats; at: number }>();

  constructor(
    private readonly learner: FocusLearner,
    private readonly config: Pick<FocusConfig, 'epsilon' | 'prior' | 'cacheMs'>,
  ) {}

  async prioritize(urls: readonly CrawlUrl[], proposed: readonly number[], frontQueues: number): Promise<number[]> {
    // Queue 0 stays the seeds'; with fewer than three queues there is nothing to order links into.
    const last = frontQueues - 1;
    if (last < 2) return [...proposed];
    const result: number[] = [];
    for (const [i, url] of urls.entries()) {
      const places = url.source === 'link' && url.referrer ? placesOf(url.referrer) : undefined;
      if (!places) {
        result.push(proposed[i]);
      } else if (Math.random() < this.config.epsilon) {
        result.push(1 + Math.floor(Math.random() * last));
      } else {
        const from = linkYield(await this.read(places.host), await this.read(places.prefix), this.config.prior);
        const target = placesOf(url.url);
        const to = target && targetShare(await this.read(target.host), await this.read(target.prefix), this.config.prior);
        const estimate = Math.max(from, to ?? 0);
        result.push(1 + Math.round((1 - estimate) * (last - 1)));
      }
    }
    return result;
  }

  /** A batch's links mostly share one referrer: its two places are read once, then served from memory briefly. */
  private async read(place: string): Promise<PlaceStats> {
    const at = Date.now();
    const cached = this.cache.get(place);
    if (cached && at - cached.at < this.config.cacheMs) return cached.stats;
    const stats = await this.learner.stats(place);
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(place, { stats, at });
    return stats;
  }
}
