import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { hashBucketsFor, PartitionedHash, STATE_STORE, StateStore } from '@crawler/state';

const COUNTS = 'counts';
const PAGES = 'pages';

/**
 * How many URLs never seen before each page has yielded, for the recrawl policy `hubs`: URL-seen adds a
 * page's fresh links to its count (grouped by the referrer the links carry), the frontier reads the count
 * when it schedules the page's next visit and compares it with the count it read the time before. The
 * count only grows, so no reader resets it and no increment is lost between a read and a reset.
 *
 * One counter per page that ever yielded a new URL, keyed by a digest of its URL (a URL can be long), in one
 * hash on a Redis node and in 1,024 over every master on a cluster (one hash would sit whole on one master). Bounded by FRONTIER_RECRAWL_HUB_PAGES: past it a page not counted yet is not counted (it reads 0,
 * a leaf); the bound may be passed by the few pages admitted at the same instant.
 */
@Injectable()
export class HubLinks {
  private readonly state: StateStore;
  private readonly counts: PartitionedHash;
  private readonly maxPages: number;

  constructor(@Inject(STATE_STORE) state: StateStore, @Inject(CRAWLER_CONFIG) config: CrawlerConfig) {
    this.state = state.namespace('hub-links');
    this.counts = new PartitionedHash(this.state, COUNTS, hashBucketsFor(config.redisUrl));
    this.maxPages = config.frontier.recrawlHubPages;
  }

  /**
   * Adds each page's fresh links: `fresh` are the URLs just admitted, each with the page it was found on.
   * Answers how many pages were refused by the bound.
   */
  async record(fresh: readonly { referrer?: string }[]): Promise<number> {
    const counts = new Map<string, number>();
    for (const { referrer } of fresh) if (referrer) counts.set(keyOf(referrer), (counts.get(keyOf(referrer)) ?? 0) + 1);
    let refused = 0;
    for (const key of counts.keys()) if (!(await this.admit(key)) && counts.delete(key)) refused++;
    if (counts.size) await this.counts.incrMany(counts);
    return refused;
  }

  /** New URLs the page has yielded since the crawl began. */
  async count(page: string): Promise<number> {
    return Number((await this.counts.get(keyOf(page))) ?? 0);
  }

  /** A new page is named atomically (HSETNX): only its first sighting counts towards the bound. */
  private async admit(key: string): Promise<boolean> {
    if ((await this.counts.get(key)) !== null) return true;
    if (Number((await this.state.get(PAGES)) ?? 0) >= this.maxPages) return false;
    if ((await this.counts.setIfAbsent(key, '0')) === null) await this.state.incr(PAGES);
    return true;
  }
}

function keyOf(page: string): string {
  return createHash('sha256').update(page).digest('base64url').slice(0, 22);
}
