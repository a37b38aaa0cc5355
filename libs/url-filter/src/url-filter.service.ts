import { readFileSync } from 'node:fs';
import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { CrawlUrl } from '@crawler/contracts';
import { ConfigError, CRAWLER_CONFIG, CrawlerConfig, portRules } from '@crawler/config';
import { LOGGER, Logger } from '@crawler/logging';
import { PluginClaims, PluginRegistry } from '@crawler/plugin-host';
import { hashBucketsFor, PartitionedHash, STATE_STORE, StateStore } from '@crawler/state';
import { ROBOTS_NAMESPACE, RobotsCache, type RobotsPolicy } from '@crawler/robots';
import {
  canonicalize,
  DEFAULT_BLOCKED_EXTENSIONS,
  DEFAULT_STRIP_PARAMS,
  isBlockedExtension,
  isCalendarTrap,
  matchesDomain,
  normalizeDomain,
  pathRepeats,
  PortPolicy,
  queryParamCount,
  scopeKey,
  toExtensionSet,
  TrapLimits,
  describeVerdict,
  loadUserRules,
  UrlRules,
  type UrlRulesVerdict,
} from '@crawler/url';
import { DomainBlocklist } from './domain-blocklist';
import { HostBudget } from './host-budget';
import { RecentUrls } from './recent-urls';
import { FILTER_RULES, FilterReason, FilterRuleName, UrlRuleName } from './url-filter.rules';

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

/** One URL under judgement: what the rules read, built once per URL that has a canonical form. */
interface Candidate {
  readonly entry: CrawlUrl;
  /** The canonical URL, the one that goes on. */
  readonly url: string;
  readonly host: string;
  readonly parsed: URL;
  /** Not a sitemap: the rules that apply to `pages` judge it. */
  readonly page: boolean;
  readonly now: number;
  readonly claims: PluginClaims;
  /** Whether its extension is blocked, worked out once for `plugin-claim` and `extension` together. */
  blockedExtension?: boolean;
  /** What the user's rules make of it (null: nothing), worked out once for `excluded` and `not-included`. */
  userVerdict?: UrlRulesVerdict | null;
}

/** Whether a rule has its opinion of the URL; a promise only when it must read the shared store. */
type RuleTest = (c: Candidate) => boolean | Promise<boolean>;

/** A per-URL rule's rejection, or the candidate every one let through. */
type Verdict = FilterReason | Candidate;

/** A `url`-stage rule of FILTER_RULES with its test, compiled once. */
interface UrlRule {
  readonly pagesOnly: boolean;
  /** What its opinion rejects the URL as; none: an exemption, whose opinion skips the next rule instead. */
  readonly rejects: FilterReason | undefined;
  readonly test: RuleTest;
}

/**
 * The URL filter: canonical form first (so every later stage sees one spelling of a URL, tracking and session
 * parameters gone), then the decide rules of FILTER_RULES in their order, the first opinion deciding (see
 * url-filter.rules.ts for the list and why first-wins). Those that need no shared state come first, and the
 * host's page budget last, so that only URLs every other rule accepts are counted against it.
 *
 * Scope: with 'host' or 'domain' each seed registers its host or registrable domain, and so does the target
 * of a seed's redirect (http://example.com → https://www.example.com); with 'allowlist' only the configured
 * domains and their subdomains are in scope, seeds included (a seed is not added to the list).
 *
 * With `filter.debug` (URL_FILTER_DEBUG) every URL's decision is logged with the rule that made it.
 */
@Injectable()
export class UrlFilterService implements OnModuleInit, OnModuleDestroy {
  private readonly store: StateStore;
  /** Host → pages admitted: a field per host the crawl meets, so partitioned over a cluster's masters. */
  /** The per-host page budget; undefined when there is none (URL_FILTER_MAX_PAGES_PER_HOST 0). */
  private readonly hostBudget?: HostBudget;
  private readonly blockedExtensions: ReadonlySet<string>;
  private readonly stripParams: readonly (string | RegExp)[];
  private readonly allowedDomains: ReadonlySet<string>;
  /** Bad settings found while reading the configuration, thrown at init (see onModuleInit). */
  private readonly configProblems: string[] = [];
  private readonly blocklist: DomainBlocklist | undefined;
  private readonly traps: TrapLimits;
  /** The `url` stage of FILTER_RULES, in order, each with its test. */
  private readonly rules: readonly UrlRule[];
  private readonly ports: PortPolicy;
  /** The user's include and exclude rules (URL_FILTER_INCLUDE, URL_FILTER_EXCLUDE, URL_FILTER_RULES_FILE). */
  private readonly userRules: UrlRules;
  private readonly inScopeCache = new Set<string>();
  private readonly robots: RobotsCache;
  /** URLs this process counted against their host's budget lately: re-discoveries are not counted again. */
  private readonly counted = new RecentUrls(COUNTED_MEMORY);
  /** Links passed on lately, as they came in. */
  private readonly passed: RecentUrls;

  constructor(
    @Inject(STATE_STORE) state: StateStore,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly plugins: PluginRegistry,
  ) {
    const { filter } = config;
    this.store = state.namespace('url-filter');
    const { maxPagesPerHost } = config.filter;
    if (maxPagesPerHost > 0) this.hostBudget = new HostBudget(new PartitionedHash(this.store, 'host-pages', hashBucketsFor(config.redisUrl)), maxPagesPerHost);
    this.robots = new RobotsCache(state.namespace(ROBOTS_NAMESPACE));
    this.blockedExtensions = filter.blockedExtensions ? toExtensionSet(filter.blockedExtensions) : DEFAULT_BLOCKED_EXTENSIONS;
    this.stripParams = stripParamsOption(filter.stripParams);
    this.allowedDomains = allowedDomains(filter.allowedDomains, filter.scope, this.configProblems);
    this.passed = new RecentUrls(filter.recentUrls);
    this.ports = new PortPolicy(portRules(config));
    this.traps = { maxPathRepeats: filter.maxPathRepeats, calendarWindowDays: filter.calendarWindowDays, maxQueryParams: filter.maxQueryParams };
    this.userRules = loadUserRules(filter, (path) => readFileSync(path, 'utf8'), this.configProblems);
    if (filter.blocklistFile) this.blocklist = new DomainBlocklist(filter.blocklistFile, filter.blocklistReloadMs, logger);
    this.rules = compileRules(this.ruleTests());
  }

  /** What each per-URL rule of FILTER_RULES tests: true = the rule has its opinion (see its `decision`). */
  private ruleTests(): Record<UrlRuleName, RuleTest> {
    const { maxUrlLength, maxDepth } = this.config.filter;
    const maxRedirects = this.config.downloader.maxRedirects;
    const traps = this.traps;
    return {
      port: (c) => this.ports.refusal(c.parsed) !== undefined,
      'too-long': (c) => c.url.length > maxUrlLength,
      'too-many-redirects': (c) => c.entry.hops > maxRedirects,
      'too-deep': (c) => c.entry.depth > maxDepth,
      blocklisted: (c) => this.blocklist?.blocks(c.parsed.hostname) === true,
      'plugin-claim': (c) => !c.claims.fetchesNothing && this.hasBlockedExtension(c) && c.claims.claimsUrl(c.parsed) !== undefined,
      extension: (c) => this.hasBlockedExtension(c),
      'too-many-params': (c) => queryParamCount(c.parsed) > traps.maxQueryParams,
      'trap.repeated-path': (c) => pathRepeats(c.parsed.pathname) > traps.maxPathRepeats,
      'trap.calendar': (c) => isCalendarTrap(c.parsed, traps.calendarWindowDays, c.now),
      'out-of-scope': (c) => this.outOfScope(c.parsed, c.entry),
      robots: (c) => this.disallowedByRobots(c.parsed),
      excluded: (c) => this.userVerdict(c)?.rejectedAs === 'excluded',
      'not-included': (c) => this.userVerdict(c)?.rejectedAs === 'not-included',
    };
  }

  private hasBlockedExtension(c: Candidate): boolean {
    return (c.blockedExtension ??= isBlockedExtension(c.parsed, this.blockedExtensions));
  }

  /** Seeds (and a seed's redirect) are exempt from the user's rules: the user named them. */
  private userVerdict(c: Candidate): UrlRulesVerdict | null {
    if (c.userVerdict !== undefined) return c.userVerdict;
    const exempt = this.userRules.size === 0 || isSeedLike(c.entry);
    return (c.userVerdict = exempt ? null : (this.userRules.judge(c.parsed) ?? null));
  }

  /** What the user's rules make of a URL, for a debug line: undefined when they let it through or it is no URL. */
  private userRulesVerdict(url: string): string | undefined {
    const canonical = canonicalize(url, undefined, { stripParams: this.stripParams });
    const verdict = canonical.ok ? this.userRules.judge(canonical.parsed) : undefined;
    return verdict && describeVerdict(verdict);
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
    const debug = this.config.filter.debug;
    const claims = await this.plugins.claims();
    const passing: Candidate[] = [];
    const judged = new Set<string>();
    for (const entry of urls) {
      if (this.passedLately(entry) || (isFound(entry) && judged.has(entry.url))) {
        repeats++;
        if (debug) this.logDecision(entry.url, undefined, 'repeat');
        continue;
      }
      judged.add(entry.url);
      let verdict = this.judge(entry, now, claims);
      if (verdict instanceof Promise) verdict = await verdict;
      if (typeof verdict === 'string') {
        rejected[verdict] = (rejected[verdict] ?? 0) + 1;
        if (debug) this.logDecision(entry.url, undefined, verdict, entry.length, this.userRuleNamed(entry, verdict));
      } else passing.push(verdict);
    }
    // The page budget last, for the whole batch in one round trip: only URLs every other rule accepts count.
    const within = await this.withinHostBudgets(passing);
    const links: string[] = [];
    passing.forEach(({ entry, url }, i) => {
      const rule = within[i] ? 'accept' : 'host-budget';
      if (rule === 'host-budget') rejected['host-budget'] = (rejected['host-budget'] ?? 0) + 1;
      else {
        accepted.push({ ...entry, url });
        if (isFound(entry)) links.push(entry.url);
      }
      if (debug) this.logDecision(entry.url, url, rule);
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

  /**
   * The rule that rejects `entry`, or the candidate every per-URL rule let through (the batch rules come
   * after). First opinion wins. Answered at once while every test answers at once (a link's usual case);
   * a promise from the first test that must wait (a store read) on.
   */
  private judge(entry: CrawlUrl, now: number, claims: PluginClaims): Verdict | Promise<Verdict> {
    // Longer than a message carries, so cut on its way here: nothing else about it can be judged.
    if (entry.length !== undefined) return 'too-long';
    const canonical = canonicalize(entry.url, undefined, { stripParams: this.stripParams });
    if (!canonical.ok) return canonical.reason;
    const { url, host, parsed } = canonical;
    return this.applyRules({ entry, url, host, parsed, page: entry.kind !== 'sitemap', now, claims, blockedExtension: undefined }, 0);
  }

  /** The rules from the `from`th on, applied to `c` (see judge). */
  private applyRules(c: Candidate, from: number): Verdict | Promise<Verdict> {
    const rules = this.rules;
    for (let i = from; i < rules.length; i++) {
      const rule = rules[i];
      if (rule.pagesOnly && !c.page) continue;
      const opinion = rule.test(c);
      if (opinion === false) continue;
      if (opinion !== true) return opinion.then((held) => (held ? this.holdOpinion(c, i) : this.applyRules(c, i + 1)));
      return this.holdOpinion(c, i);
    }
    return c;
  }

  /** The `i`th rule has its opinion: it rejects `c`, or (an exemption) skips the rule after it. */
  private holdOpinion(c: Candidate, i: number): Verdict | Promise<Verdict> {
    const rejects = this.rules[i].rejects;
    return rejects ?? this.applyRules(c, i + 2);
  }

  /**
   * One line per URL with the rule that decided it (`repeat`: dropped before the rules, passed on lately);
   * `length` for a URL cut to what a message carries.
   */
  private logDecision(input: string, url: string | undefined, rule: FilterRuleName | 'repeat', length?: number, userRule?: string): void {
    const fields = {
      event: 'url-filter-decision',
      url: input,
      ...(url && url !== input ? { canonical: url } : {}),
      ...(length ? { length } : {}),
      rule,
      ...(userRule ? { userRule } : {}),
    };
    this.logger.info(fields, `url-filter: ${rule} ${input}`);
  }

  /** For a debug line: the user rule behind an `excluded` or `not-included` rejection. */
  private userRuleNamed(entry: CrawlUrl, reason: FilterReason): string | undefined {
    return reason === 'excluded' || reason === 'not-included' ? this.userRulesVerdict(entry.url) : undefined;
  }

  /**
   * robots.txt is checked before a URL is enqueued when the site's policy is already known (the
   * downloader checks again, and fetches robots.txt first, before any request to the site).
   */
  private disallowedByRobots(url: URL): boolean | Promise<boolean> {
    const known = this.robots.getKnown(url);
    return known !== undefined ? disallows(known, url) : this.robots.get(url).then((policy) => disallows(policy, url));
  }

  /** Sync unless the scope must be registered or looked up in the shared store. */
  private outOfScope(url: URL, entry: CrawlUrl): boolean | Promise<boolean> {
    const { scope } = this.config.filter;
    if (scope === 'allowlist') return !matchesDomain(url.hostname, this.allowedDomains);
    const key = scopeKey(url, scope);
    if (key === null) return false;
    if (isSeedLike(entry)) return this.registerScope(key);
    if (this.inScopeCache.has(key)) return false;
    return this.store.setHas('scope', key).then((allowed) => {
      if (allowed) this.inScopeCache.add(key);
      return !allowed;
    });
  }

  /** A seed (or a seed's redirect) brings its host or domain into scope; never out of scope itself. */
  private async registerScope(key: string): Promise<false> {
    await this.store.setAdd('scope', [key]);
    this.inScopeCache.add(key);
    return false;
  }

  /**
   * The per-host page budget: URLs admitted per host, at most `maxPagesPerHost` (HostBudget: shared by every
   * replica through `host-pages` in the state store, partitioned by host on a cluster, and reserved a few pages
   * ahead). The filter runs before URL-seen, so the same URL found on many pages would count each time; a
   * process remembers the URLs it counted lately and counts those once (another replica, or this one after
   * forgetting, may count a URL again: a host never gets more fetches than its budget, and a site with many
   * repeated links may reach its budget a little before that many distinct pages).
   */
  private async withinHostBudgets(urls: readonly { url: string; host: string; page: boolean }[]): Promise<boolean[]> {
    const within = urls.map(() => true);
    if (!this.hostBudget) return within;
    // The URLs to count: pages not counted lately, each once (a second sighting in the batch shares the first's answer).
    const first = new Map<string, number>();
    urls.forEach(({ url, page }, i) => {
      if (page && !this.counted.has(url) && !first.has(url)) first.set(url, i);
    });
    const needs = new Map<string, number>();
    for (const i of first.values()) needs.set(urls[i].host, (needs.get(urls[i].host) ?? 0) + 1);
    const granted = await this.hostBudget.grant(needs);
    for (const i of first.values()) {
      const { url, host } = urls[i];
      const left = granted.get(host)!;
      if (left > 0) {
        granted.set(host, left - 1);
        this.counted.add(url);
      } else within[i] = false;
    }
    urls.forEach(({ url }, i) => {
      const j = first.get(url);
      if (j !== undefined) within[i] = within[j];
    });
    return within;
  }
}

/** The `url` stage of FILTER_RULES, in order, each with its test. */
function compileRules(tests: Record<UrlRuleName, RuleTest>): UrlRule[] {
  const rules: UrlRule[] = [];
  for (const spec of FILTER_RULES) {
    if (spec.stage !== 'url') continue;
    const rejects = spec.decision === 'reject' ? spec.name : undefined;
    rules.push({ pagesOnly: spec.appliesTo === 'pages', rejects, test: tests[spec.name] });
  }
  return rules;
}

/** An unreachable robots.txt defers the site (the downloader retries it); it is no reason to drop links. */
function disallows(policy: RobotsPolicy | null, url: URL): boolean {
  return policy !== null && policy.outcome !== 'unreachable' && !policy.isAllowed(url);
}

/** A seed, or a seed's redirect: it registers its scope, and the user's rules do not judge it. */
function isSeedLike(entry: CrawlUrl): boolean {
  return entry.source === 'seed' || (entry.source === 'redirect' && entry.depth === 0);
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
