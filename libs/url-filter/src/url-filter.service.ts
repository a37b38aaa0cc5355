import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { CrawlUrl } from '@crawler/contracts';
import { ConfigError, CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { LOGGER, Logger } from '@crawler/logging';
import { PluginClaims, PluginRegistry } from '@crawler/runtime';
import { hashBucketsFor, PartitionedHash, STATE_STORE, StateStore } from '@crawler/state';
import { ROBOTS_NAMESPACE, RobotsCache } from '@crawler/robots';
import {
  canonicalize,
  DEFAULT_BLOCKED_EXTENSIONS,
  DEFAULT_STRIP_PARAMS,
  isBlockedExtension,
  matchesDomain,
  normalizeDomain,
  PortPolicy,
  scopeKey,
  spiderTrap,
  toExtensionSet,
  TrapLimits,
} from '@crawler/url';
import { DomainBlocklist } from './domain-blocklist';
import { RecentUrls } from './recent-urls';

/** Why a URL was dropped; each is counted as `filtered.<reason>`. */
export type FilterReason =
  | 'malformed'
  | 'scheme'
  | 'credentials'
  | 'port'
  | 'too-long'
  | 'too-many-redirects'
  | 'too-deep'
  | 'blocklisted'
  | 'out-of-scope'
  | 'extension'
  | 'too-many-params'
  | 'trap.repeated-path'
  | 'trap.calendar'
  | 'robots'
  | 'host-budget';

export interface FilterResult {
  accepted: CrawlUrl[];
  /** Rejections counted by reason. */
  rejected: Partial<Record<FilterReason, number>>;
  /** Links dropped because this process passed them on lately (URL-seen has them). */
  repeats: number;
  /** The accepted links as they came in: `passedOn` remembers them once they are sent. */
  links: string[];
}

/**
 * Configured strip parameters as canonicalize() takes them: `utm_*` (any entry ending in `*`) is a prefix,
 * anything else an exact name, both case-insensitive; none configured = the built-in tracking and session
 * list (DEFAULT_STRIP_PARAMS).
 */
export function stripParamsOption(configured: readonly string[] | undefined): readonly (string | RegExp)[] {
  const entries = (configured ?? []).map((p) => p.trim()).filter(Boolean);
  if (entries.length === 0) return DEFAULT_STRIP_PARAMS;
  return entries.map((p) => (p.endsWith('*') ? new RegExp(`^${p.slice(0, -1).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'i') : p));
}

/** How many URLs a process remembers having counted against their host's budget. */
const COUNTED_MEMORY = 65_536;

/**
 * Canonical form first (so every later stage sees one spelling of a URL, tracking and session parameters
 * gone), then the rules, first match wins, those that need no shared state first: the port (no request
 * may reach a mail server, a database or the crawler's own Redis however a link names it), URL length, redirect
 * hops, depth, domain blocklist, file extension, spider traps (too many query parameters, repeated path
 * segments, calendar dates far from today), scope, robots.txt when the site's policy is cached, and last
 * the host's page budget, so that only URLs the filter accepts are counted against it.
 *
 * Sitemaps (`kind: 'sitemap'`) skip the extension rule (they are XML, often `.xml.gz`), the trap heuristics
 * and the page budget; every other rule applies to them.
 *
 * Plugins: a URL an enabled plugin claims (by extension, e.g. `png`, or path pattern) is not blocked by
 * the extension rule; every other rule applies to it. The claims come from the plugin registry.
 *
 * Scope: with 'host' or 'domain' each seed registers its host or registrable domain, and so does the target
 * of a seed's redirect (http://example.com → https://www.example.com); with 'allowlist' only the configured
 * domains and their subdomains are in scope, seeds included (a seed is not added to the list).
 */
@Injectable()
export class UrlFilterService implements OnModuleInit, OnModuleDestroy {
  private readonly store: StateStore;
  /** Host → pages admitted: a field per host the crawl meets, so partitioned over a cluster's masters. */
  private readonly hostPages: PartitionedHash;
  private readonly blockedExtensions: ReadonlySet<string>;
  private readonly stripParams: readonly (string | RegExp)[];
  private readonly allowedDomains: ReadonlySet<string>;
  /** Bad settings found while reading the configuration, thrown at init (see onModuleInit). */
  private readonly configProblems: string[] = [];
  private readonly blocklist: DomainBlocklist | undefined;
  private readonly traps: TrapLimits;
  private readonly ports: PortPolicy;
  private readonly inScopeCache = new Set<string>();
  private readonly robots: RobotsCache;
  /** URLs this process counted against their host's budget lately: re-discoveries are not counted again. */
  private readonly counted = new RecentUrls(COUNTED_MEMORY);
  /** Links passed on lately, as they came in. */
  private readonly passed: RecentUrls;

  constructor(
    @Inject(STATE_STORE) state: StateStore,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
    @Inject(LOGGER) logger: Logger,
    private readonly plugins: PluginRegistry = PluginRegistry.none(),
  ) {
    const { filter } = config;
    this.store = state.namespace('url-filter');
    this.hostPages = new PartitionedHash(this.store, 'host-pages', hashBucketsFor(config.redisUrl));
    this.robots = new RobotsCache(state.namespace(ROBOTS_NAMESPACE));
    this.blockedExtensions = filter.blockedExtensions ? toExtensionSet(filter.blockedExtensions) : DEFAULT_BLOCKED_EXTENSIONS;
    this.stripParams = stripParamsOption(filter.stripParams);
    this.allowedDomains = allowedDomains(filter.allowedDomains, filter.scope, this.configProblems);
    this.passed = new RecentUrls(filter.recentUrls);
    this.ports = new PortPolicy({ allowed: filter.allowedPorts, blocked: filter.blockedPorts });
    this.traps = { maxPathRepeats: filter.maxPathRepeats, calendarWindowDays: filter.calendarWindowDays, maxQueryParams: filter.maxQueryParams };
    if (filter.blocklistFile) this.blocklist = new DomainBlocklist(filter.blocklistFile, filter.blocklistReloadMs, logger);
  }

  /**
   * Checks the allowlist and reads the blocklist file, then starts watching it. A bad setting throws a
   * ConfigError naming its variable. (Here rather than in the constructor: Nest aborts the process on an
   * error while it creates providers, before the message is logged; an error in a lifecycle hook reaches
   * the caller, which prints it.)
   */
  onModuleInit(): void {
    if (this.configProblems.length) throw new ConfigError(this.configProblems);
    this.blocklist?.load();
    this.blocklist?.start();
  }

  onModuleDestroy(): void {
    this.blocklist?.stop();
  }

  async filter(urls: CrawlUrl[], now: number = Date.now()): Promise<FilterResult> {
    const accepted: CrawlUrl[] = [];
    const rejected: FilterResult['rejected'] = {};
    let repeats = 0;
    const { maxUrlLength, maxDepth } = this.config.filter;
    const claims = await this.plugins.claims();
    const passing: { entry: CrawlUrl; url: string; host: string }[] = [];
    const judged = new Set<string>();
    for (const entry of urls) {
      if (this.passedLately(entry) || (isFound(entry) && judged.has(entry.url))) {
        repeats++;
        continue;
      }
      judged.add(entry.url);
      const verdict = await this.judge(entry, maxUrlLength, maxDepth, now, claims);
      if (typeof verdict === 'string') rejected[verdict] = (rejected[verdict] ?? 0) + 1;
      else passing.push({ entry, ...verdict });
    }
    // The page budget last, for the whole batch in one round trip: only URLs every other rule accepts count.
    const within = await this.withinHostBudgets(passing.map(({ entry, url, host }) => ({ url, host, page: entry.kind !== 'sitemap' })));
    const links: string[] = [];
    passing.forEach(({ entry, url }, i) => {
      if (!within[i]) rejected['host-budget'] = (rejected['host-budget'] ?? 0) + 1;
      else {
        accepted.push({ ...entry, url });
        if (isFound(entry)) links.push(entry.url);
      }
    });
    return { accepted, rejected, repeats, links };
  }

  /**
   * Remembers a result's links as passed on, once they are safely sent: remembered before, a send that
   * failed would see its retry drop them as repeats, and URL-seen would never get them.
   */
  passedOn(result: FilterResult): void {
    for (const link of result.links) this.passed.add(link);
  }

  /**
   * A link (not a seed, nor a seed's redirect: those register scope) this process already passed on: URL-seen
   * has it, and would drop it. Most links of a page are such repeats, so this is most of the filter's work.
   */
  private passedLately(entry: CrawlUrl): boolean {
    return isFound(entry) && this.passed.has(entry.url);
  }

  /** The reason to drop `entry` by every rule but the page budget, or its canonical URL and host. */
  private async judge(entry: CrawlUrl, maxUrlLength: number, maxDepth: number, now: number, claims: PluginClaims): Promise<FilterReason | { url: string; host: string }> {
    const canonical = canonicalize(entry.url, undefined, { stripParams: this.stripParams });
    if (!canonical.ok) return canonical.reason;
    const { url, host } = canonical;
    const page = entry.kind !== 'sitemap';
    const parsed = new URL(url);
    if (this.ports.refusal(parsed)) return 'port';
    if (url.length > maxUrlLength) return 'too-long';
    if (entry.hops > this.config.downloader.maxRedirects) return 'too-many-redirects';
    if (entry.depth > maxDepth) return 'too-deep';
    if (this.blocklist?.blocks(parsed.hostname)) return 'blocklisted';
    if (page && isBlockedExtension(parsed, this.blockedExtensions, claims.extensions) && !claims.claimsUrl(parsed)) return 'extension';
    const trap = page ? spiderTrap(parsed, this.traps, now) : null;
    if (trap) return trap;
    if (!(await this.inScope(parsed, entry))) return 'out-of-scope';
    if (await this.disallowedByRobots(parsed)) return 'robots';
    return { url, host };
  }

  /**
   * robots.txt is checked before a URL is enqueued when the site's policy is already known (the
   * downloader checks again, and fetches robots.txt first, before any request to the site).
   */
  private async disallowedByRobots(url: URL): Promise<boolean> {
    const policy = await this.robots.get(url);
    // An unreachable robots.txt defers the site (the downloader retries it); it is no reason to drop links.
    return policy !== null && policy.outcome !== 'unreachable' && !policy.isAllowed(url);
  }

  private async inScope(url: URL, entry: CrawlUrl): Promise<boolean> {
    const { scope } = this.config.filter;
    if (scope === 'allowlist') return matchesDomain(url.hostname, this.allowedDomains);
    const key = scopeKey(url, scope);
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

  /**
   * The per-host page budget: URLs admitted per host (`host-pages` in the state store, shared by every
   * replica; partitioned by host on a cluster), at most `maxPagesPerHost`. The filter runs before URL-seen, so the same URL found on many
   * pages would count each time; a process remembers the URLs it counted lately and counts those once
   * (another replica, or this one after forgetting, may count a URL again: the count is never below the
   * number of distinct URLs admitted, so a host never gets more fetches than its budget, and a site with
   * many repeated links may reach its budget a little before that many distinct pages).
   *
   * Increment first, then give the unit back when over: an atomic count per host, no check-then-act race
   * between replicas.
   */
  private async withinHostBudgets(urls: { url: string; host: string; page: boolean }[]): Promise<boolean[]> {
    const budget = this.config.filter.maxPagesPerHost;
    const within = urls.map(() => true);
    if (budget === 0) return within;
    // The URLs to count: pages not counted lately, each once (a second sighting in the batch shares the first's answer).
    const first = new Map<string, number>();
    urls.forEach(({ url, page }, i) => {
      if (page && !this.counted.has(url) && !first.has(url)) first.set(url, i);
    });
    const toCount = [...first.values()];
    const counts = await this.hostPages.incrEach(toCount.map((i) => urls[i].host));
    const givenBack = new Map<string, number>();
    toCount.forEach((i, n) => {
      const { url, host } = urls[i];
      if (counts[n] > budget) {
        within[i] = false;
        givenBack.set(host, (givenBack.get(host) ?? 0) - 1);
      } else this.counted.add(url);
    });
    urls.forEach(({ url }, i) => {
      const j = first.get(url);
      if (j !== undefined) within[i] = within[j];
    });
    if (givenBack.size) await this.hostPages.incrMany(givenBack);
    return within;
  }

}

/** A URL found on a page or in a sitemap (seeds and redirects register scope, and are never taken for repeats). */
function isFound(entry: CrawlUrl): boolean {
  return entry.source === 'link' || entry.source === 'sitemap';
}

/** The allowlist, normalised; a bad entry (or none with scope 'allowlist') is added to `problems`. */
function allowedDomains(configured: readonly string[], scope: CrawlerConfig['filter']['scope'], problems: string[]): ReadonlySet<string> {
  const domains = new Set<string>();
  const bad: string[] = [];
  for (const entry of configured) {
    if (entry.trim() === '') continue;
    const domain = normalizeDomain(entry);
    if (domain === null) bad.push(JSON.stringify(entry));
    else domains.add(domain);
  }
  if (bad.length) problems.push(`URL_FILTER_ALLOWED_DOMAINS: not domain names: ${bad.join(', ')}`);
  if (scope === 'allowlist' && domains.size === 0) {
    problems.push("URL_FILTER_ALLOWED_DOMAINS: scope 'allowlist' needs at least one domain (URL_FILTER_SCOPE=allowlist)");
  }
  return domains;
}
