import type { CrawlUrl, Prioritizer } from '@crawler/plugin-sdk';
import type { FocusConfig } from './focus.config';
import { FocusLearner, linkYield, placesOf, PlaceStats, targetShare } from './focus-learner';
import { gradeOf } from './focus-relevance';

/** Places read per batch are kept this many at most between reads (a bound on the frontier's memory). */
const CACHE_LIMIT = 10_000;

/** What is known of a link when it is scored: each an expected yield (0…1), undefined when unknown. */
export interface LinkEvidence {
  /** The learned yield of the place the link was found at (its host or path prefix). */
  from: number;
  /** The share of relevant pages at the place it leads to, once some were judged. */
  to?: number;
  /** The graded relevance of the page it was found on (gradeOf), once judged. */
  page?: number;
  /** Whether it leads to another page of its page's host. */
  sameHost: boolean;
  /** True for the first link met into a host: one page of each new site is tried at the prior. */
  newHost: boolean;
}

/**
 * A link's estimate: the best of what speaks for it. Its page's graded relevance is shark-search's
 * inheritance: a link on a page about the topic is likely about it, and a link to another site from a page
 * near the topic leads nearer. A page only near the topic says little of the rest of its own site, which the
 * learner judges from the site's pages (`from`): without that, a crawl climbing toward a topic, or leaving
 * one it has exhausted, digs through every page of the sites around it. The place it was found at and the
 * place it leads to are what the learner knows; and the first link into a new host is worth the prior, so
 * that one page of every site met is tried before more pages of sites already found barren (the frontier
 * widens over sites rather than digging through one).
 */
export function linkEstimate(evidence: LinkEvidence, prior: number): number {
  const page = evidence.page ?? 0;
  const inherited = evidence.sameHost && page < 1 ? 0 : page;
  return Math.max(evidence.from, evidence.to ?? 0, inherited, evidence.newHost ? prior : 0);
}

/**
 * Orders links by linkEstimate: into front queues 1 (estimate 1) to last (0); queue 0 stays the seeds'. A
 * share `epsilon` of links gets a random queue instead, so places the learner would never try again still
 * get a chance to prove it wrong. Seeds, redirects, recrawls and sitemaps keep what the frontier chose.
 */
export class FocusPrioritizer implements Prioritizer {
  private readonly cache = new Map<string, { stats: PlaceStats; at: number }>();

  constructor(
    private readonly learner: FocusLearner,
    private readonly config: Pick<FocusConfig, 'epsilon' | 'prior' | 'cacheMs' | 'threshold' | 'judgeWaitMs'>,
  ) {}

  async prioritize(urls: readonly CrawlUrl[], proposed: readonly number[], frontQueues: number): Promise<number[]> {
    // With fewer than three queues there is nothing to order links into.
    const last = frontQueues - 1;
    if (last < 2) return [...proposed];
    // A batch's links mostly share one page: its judgement is awaited once, for all of them at once.
    const judgements = new Map<string, Promise<number | undefined>>();
    const judgement = (referrer: string) => {
      let pending = judgements.get(referrer);
      if (!pending) judgements.set(referrer, (pending = this.learner.judgement(referrer, this.config.judgeWaitMs)));
      return pending;
    };
    const result: number[] = [];
    for (const [i, url] of urls.entries()) {
      const places = url.source === 'link' && url.referrer ? placesOf(url.referrer) : undefined;
      if (!places || !url.referrer) {
        result.push(proposed[i]);
      } else if (Math.random() < this.config.epsilon) {
        result.push(1 + Math.floor(Math.random() * last));
      } else {
        const score = await judgement(url.referrer);
        const target = placesOf(url.url);
        const estimate = linkEstimate(
          {
            from: linkYield(await this.read(places.host), await this.read(places.prefix), this.config.prior),
            to: target && targetShare(await this.read(target.host), await this.read(target.prefix), this.config.prior),
            page: score === undefined ? undefined : gradeOf(score, this.config.threshold),
            sameHost: target?.host === places.host,
            newHost: target !== undefined && (await this.learner.firstSighting(target.host)),
          },
          this.config.prior,
        );
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
