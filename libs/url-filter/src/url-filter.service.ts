import { Inject, Injectable } from '@nestjs/common';
import { CrawlUrl } from '@crawler/contracts';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { STATE_STORE, StateStore } from '@crawler/state';
import { ROBOTS_NAMESPACE, RobotsCache } from '@crawler/robots';
import { canonicalize, DEFAULT_BLOCKED_EXTENSIONS, isBlockedExtension, scopeKey, toExtensionSet } from '@crawler/url';

export interface FilterResult {
  accepted: CrawlUrl[];
  /** Rejections counted by reason. */
  rejected: Record<string, number>;
}

/**
 * Canonical form first (so every later stage sees one spelling of a URL), then the rules: URL length,
 * redirect hops, depth, blocked extension, scope, and robots.txt when the site's policy is cached. Seeds define the scope: with scope 'host' or 'domain'
 * each seed registers its host or registrable domain, and so does the target of a seed's redirect
 * (http://example.com → https://www.example.com).
 */
@Injectable()
export class UrlFilterService {
  private readonly store: StateStore;
  private readonly blocked: ReadonlySet<string>;
  private readonly inScopeCache = new Set<string>();
  private readonly robots: RobotsCache;

  constructor(
    @Inject(STATE_STORE) state: StateStore,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
  ) {
    this.store = state.namespace('url-filter');
    this.robots = new RobotsCache(state.namespace(ROBOTS_NAMESPACE));
    this.blocked = config.filter.blockedExtensions ? toExtensionSet(config.filter.blockedExtensions) : DEFAULT_BLOCKED_EXTENSIONS;
  }

  async filter(urls: CrawlUrl[]): Promise<FilterResult> {
    const accepted: CrawlUrl[] = [];
    const rejected: Record<string, number> = {};
    const reject = (reason: string) => (rejected[reason] = (rejected[reason] ?? 0) + 1);
    const { maxUrlLength, maxDepth, scope } = this.config.filter;
    for (const entry of urls) {
      const canonical = canonicalize(entry.url);
      if (!canonical.ok) {
        reject(canonical.reason);
        continue;
      }
      const url = canonical.url;
      if (url.length > maxUrlLength) reject('too-long');
      else if (entry.hops > this.config.downloader.maxRedirects) reject('too-many-redirects');
      else if (entry.depth > maxDepth) reject('too-deep');
      else if (isBlockedExtension(url, this.blocked)) reject('extension');
      else if (!(await this.inScope(url, entry))) reject('out-of-scope');
      else if (await this.disallowedByRobots(url)) reject('robots');
      else accepted.push({ ...entry, url });
    }
    return { accepted, rejected };
  }

  /**
   * robots.txt is checked before a URL is enqueued when the site's policy is already known (the
   * downloader checks again, and fetches robots.txt first, before any request to the site).
   */
  private async disallowedByRobots(url: string): Promise<boolean> {
    const policy = await this.robots.get(url);
    // An unreachable robots.txt defers the site (the downloader retries it); it is no reason to drop links.
    return policy !== null && policy.outcome !== 'unreachable' && !policy.isAllowed(url);
  }

  private async inScope(url: string, entry: CrawlUrl): Promise<boolean> {
    const key = scopeKey(url, this.config.filter.scope);
    if (key === null) return true;
    if (entry.source === 'seed' || (entry.source === 'redirect' && entry.depth === 0)) {
      await this.store.setAdd('scope', [key]);
      this.inScopeCache.add(key);
      return true;
    }
    if (this.inScopeCache.has(key)) return true;
    const allowed = await this.store.setHas('scope', key);
    if (allowed) this.inScopeCache.add(key);
    return allowed;
  }
}
