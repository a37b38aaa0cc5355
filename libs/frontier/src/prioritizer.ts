import type { CrawlUrl, Prioritizer } from '@crawler/contracts';

export type { Prioritizer } from '@crawler/contracts';

/** The frontier's prioritizer: its own scoring, then each enabled plugin's (PrioritizerChain). */
export const FRONTIER_PRIORITIZER = Symbol('FRONTIER_PRIORITIZER');

/**
 * Seeds first, then redirect targets and due recrawls (pages we already chose to fetch), then sitemap URLs by their
 * `<priority>`, then links by depth: breadth-first in spirit, shallow pages before deep ones. The first link of
 * the chain; it ignores what it is proposed.
 */
export class DefaultPrioritizer implements Prioritizer {
  prioritize(urls: readonly CrawlUrl[], _proposed: readonly number[], frontQueues: number): number[] {
    return urls.map((url) => this.priority(url, frontQueues));
  }

  priority(url: CrawlUrl, frontQueues: number): number {
    const last = frontQueues - 1;
    switch (url.source) {
      case 'seed':
        return 0;
      case 'redirect':
      case 'recrawl':
        return Math.min(1, last);
      case 'sitemap':
        return Math.min(last, 1 + Math.round((1 - (url.priority ?? 0.5)) * 3));
      default:
        return Math.min(last, 2 + url.depth);
    }
  }
}

/**
 * Runs prioritizers in order, each given the choice of the ones before; what comes out is checked, so a
 * plugin's mistake (a fraction, a negative, a short answer) cannot corrupt the store's front queues.
 */
export class PrioritizerChain implements Prioritizer {
  constructor(private readonly chain: readonly Prioritizer[]) {
    if (chain.length === 0) throw new Error('a prioritizer chain needs at least one prioritizer');
  }

  async prioritize(urls: readonly CrawlUrl[], proposed: readonly number[], frontQueues: number): Promise<number[]> {
    let current = [...proposed];
    for (const prioritizer of this.chain) {
      const next = await prioritizer.prioritize(urls, current, frontQueues);
      if (next.length !== urls.length) throw new Error(`a prioritizer answered ${next.length} front queues for ${urls.length} URLs`);
      current = next.map((q) => (Number.isFinite(q) ? Math.min(frontQueues - 1, Math.max(0, Math.round(q))) : frontQueues - 1));
    }
    return current;
  }

  /** The front queue of each URL, from nothing proposed (every URL in the last queue). */
  of(urls: readonly CrawlUrl[], frontQueues: number): Promise<number[]> {
    return this.prioritize(
      urls,
      urls.map(() => frontQueues - 1),
      frontQueues,
    );
  }
}
