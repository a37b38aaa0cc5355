import type { CrawlUrl } from '@crawler/contracts';

/**
 * Chooses a URL's front queue: 0 is served first. Plug in another by providing FRONTIER_PRIORITIZER
 * (e.g. a focused-crawl scorer that learns which hosts lead to relevant pages).
 */
export interface Prioritizer {
  priority(url: CrawlUrl, frontQueues: number): number;
}

export const FRONTIER_PRIORITIZER = Symbol('FRONTIER_PRIORITIZER');

/**
 * Seeds first, then redirect targets and due recrawls (pages we already chose to fetch), then sitemap URLs by their
 * `<priority>`, then links by depth: breadth-first in spirit, shallow pages before deep ones.
 */
export class DefaultPrioritizer implements Prioritizer {
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
