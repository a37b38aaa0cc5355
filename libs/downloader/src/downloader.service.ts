import { Inject, Injectable, OnApplicationShutdown, Optional } from '@nestjs/common';
import { CrawlUrl, FetchedPage, FetchErrorKind, FetchOutcome, FetchRequest, PluginManifest, pluginQueue, QueueName, SCHEMA_VERSION } from '@crawler/contracts';
import { CRAWLER_CONFIG, CrawlerConfig, portRules } from '@crawler/config';
import { BODY_STAGING, BodyStaging } from '@crawler/content-store';
import { FetchLog, LOGGER, Logger } from '@crawler/logging';
import { RobotsPolicy } from '@crawler/robots';
import { PluginClaims, PluginRegistry } from '@crawler/plugin-host';
import { SiteSettingsService } from '@crawler/crawl-state';
import { SITE_CONCURRENCY_MAX } from '@crawler/site-settings';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { PortPolicy } from '@crawler/url';
import { DownloaderMetrics } from './downloader.metrics';
import { bodyHash, ExchangeArchive } from './exchange-archive.service';
import { CookieJarService } from './cookie-jar.service';
import { FetchRoutes, insecureWarning } from './fetch-routes';
import { AddressFailover, classifyFetchError, FetchResponse, HttpFetcher } from './http-fetcher';
import { httpFreshness } from './http-freshness';
import { KeptForRetry, leaseEnd } from './kept-for-retry';
import { parseRetryAfter } from '@crawler/net';
import { RobotsFetch, RobotsService } from './robots.service';

export { parseRetryAfter } from '@crawler/net';

const HTML_TYPES = /^\s*(text\/html|application\/xhtml\+xml)\s*(;|$)/i;
/** What sitemaps are served as: XML, gzip (`.xml.gz` is the file itself), or the protocol's text format. */
const SITEMAP_TYPES = /^\s*($|;|(text|application)\/([\w.+-]*\+)?xml|text\/plain|application\/(x-)?gzip|application\/octet-stream)/i;

/**
 * One turn of one host: robots.txt first if the site's policy is not cached (that request is the whole
 * turn, and the page goes back to the frontier), otherwise the page itself. HTML bodies are staged in the
 * content store and handed to the parser by key; redirect targets go back through the URL filter.
 *
 * Content-type routing, on the headers, before the body is read: HTML goes to the parser; a type an enabled
 * plugin claims (plugin registry) is read under the plugin's size limit, staged the same way and sent to
 * the plugin's queue `plugin.<name>`; anything else is dropped unread. An HTML page whose path a plugin
 * claims (`claims.pages`) goes to that plugin instead of the parser: the plugin hands it on to the parser.
 */
@Injectable()
export class DownloaderService implements OnApplicationShutdown {
  private readonly fetcher: HttpFetcher;
  /** The URL filter's port rule, kept here too: a URL queued before the rule changed must not reach a refused port. */
  private readonly ports: PortPolicy;
  /** The last request this process started to each address: when it left, once it has (see ipTurn). */
  private readonly lastTurnByIp = new Map<string, AddressTurn>();
  /** Each site's proxy and TLS options (robots.txt goes the same way as the site's pages). */
  private readonly routes: FetchRoutes;
  /** Pages answered whose handing on failed, by lease, for the job's retry (see finishPage). */
  private readonly answers: KeptForRetry<{ answer: PageAnswer; crawlDelayMs: number | undefined }>;

  constructor(
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
    @Inject(BODY_STAGING) private readonly staging: BodyStaging,
    private readonly robots: RobotsService,
    private readonly pipeline: Pipeline,
    private readonly stats: CrawlStats,
    private readonly fetchLog: FetchLog,
    private readonly metrics: DownloaderMetrics,
    private readonly plugins: PluginRegistry,
    /** A site's user agent and extra request headers (robots.txt is always asked for as the crawler itself). */
    private readonly sites: SiteSettingsService,
    /** WARC_ALL: every request made and its response. */
    private readonly archive: ExchangeArchive,
    /** The site's cookies: sent with its pages, and what they set kept (never with robots.txt: see RobotsService). */
    private readonly cookies: CookieJarService,
    @Optional() @Inject(LOGGER) private readonly logger?: Logger,
  ) {
    // A site's concurrency (up to SITE_CONCURRENCY_MAX, live changes included) or the crawl's per-host limit.
    const connectionsPerOrigin = Math.max(4, config.frontier.perHostLimit, SITE_CONCURRENCY_MAX);
    this.fetcher = new HttpFetcher({ ...config.downloader, readUnwanted: archive.readUnwanted, connectionsPerOrigin });
    this.routes = FetchRoutes.load(config);
    if (this.routes.insecureSites.length) logger?.warn({ event: 'tls-unverified', sites: this.routes.insecureSites }, insecureWarning(this.routes.insecureSites));
    if (this.routes.crawlProxyShown)
      logger?.info(
        { event: 'proxy', proxy: this.routes.crawlProxyShown },
        `every request goes through the proxy ${this.routes.crawlProxyShown} unless a site says otherwise`,
      );
    this.answers = new KeptForRetry(config.downloader.concurrency);
    this.ports = new PortPolicy(portRules(config));
  }

  /**
   * One turn. Answers null when the turn goes on elsewhere: a robots.txt redirected to another host, whose
   * address the resolver vets first (the request comes back here with `robotsHop`).
   */
  async download(request: FetchRequest): Promise<FetchOutcome | null> {
    const base = this.base(request);
    const address = request.ip;
    if (!address && !request.robotsHop?.refusal) return { ...base, kind: 'error', requested: false, error: 'no vetted address', durationMs: 0 };
    const refused = this.ports.refusal(new URL(request.url));
    if (refused) {
      await this.stats.count('error.port-refused');
      return { ...base, kind: 'error', requested: false, error: refused, durationMs: 0 };
    }
    // What the enabled plugins claim (at once from cache; at boot it may wait for a plugin to register,
    // which is why it comes before the lease check).
    const plugins = await this.plugins.claims();
    // An earlier delivery got the page's answer and failed handing it on: this one takes up from there.
    const kept = request.robotsHop ? undefined : this.answers.take(request.leaseId);
    if (kept) return this.finishPage(request, kept.answer, plugins, kept.crawlDelayMs);
    // A request that waited in the queue so long that its lease could run out mid-fetch is not started:
    // the frontier might meanwhile hand the host to another fetch (two requests to one host at once).
    if (request.leaseExpiresAt !== undefined && Date.now() + this.config.downloader.totalTimeoutMs > request.leaseExpiresAt) {
      await this.stats.count('skipped.lease-expiring');
      return { ...base, kind: 'skipped', requested: false, durationMs: 0, retry: crawlUrlOf(request) };
    }
    if (request.robotsHop) return this.robotsTurn(request);

    const policy = await this.robots.cached(request.url);
    if (!policy) return this.robotsTurn(request);
    const crawlDelayMs = policy.crawlDelayMs();
    if (policy.outcome === 'unreachable') {
      // RFC 9309: a robots.txt that answered 5xx or could not be reached means "disallow all for now":
      // the site's URLs wait for its next try (the cached answer expires then), they are not dropped.
      this.metrics.robotsDecision('deferred');
      await this.stats.count('deferred.robots-unreachable');
      const failures = await this.robots.failures(request.url);
      const nextTryAt = failures?.nextTryAt ?? Date.now() + this.config.downloader.robotsErrorTtlMs;
      return {
        ...base,
        kind: 'deferred',
        cause: 'robots',
        requested: false,
        durationMs: 0,
        retryAfterMs: Math.max(0, nextTryAt - Date.now()),
        retry: crawlUrlOf(request),
        ...(failures ? { robotsUnreachable: { ...failures, giveUp: false } } : {}),
      };
    }
    if (!policy.isAllowed(request.url)) {
      this.metrics.robotsDecision('disallowed');
      await this.stats.count('disallowed');
      return { ...base, kind: 'disallowed', requested: false, durationMs: 0, crawlDelayMs };
    }
    this.metrics.robotsDecision('allowed');
    const answer = await this.requestPage(request, address!, plugins);
    await this.countAnswer(request, answer);
    await this.keepCookies(request, answer);
    return this.finishPage(request, answer, plugins, crawlDelayMs);
  }

  /**
   * robots.txt is this turn (the page comes back later): fetched, or its redirect chain continued. A chain
   * that moves to another host is sent back through the resolver, and the turn ends when the chain does.
   */
  private async robotsTurn(request: FetchRequest): Promise<FetchOutcome | null> {
    const hop = request.robotsHop;
    // The URL's own host's address: hosts sharing it are paced together, whatever host the chain led to.
    let base = { ...this.base(request), ip: hop ? hop.originIp : request.ip };
    const robotsStarted = performance.now();
    let robots: RobotsFetch;
    if (hop?.refusal) {
      robots = this.robots.refused(request.url, hop, hop.refusal);
    } else {
      // A hop's address is another host's: the interval the frontier sent is its own host's address's.
      await this.ipTurn(request.ip!, hop ? undefined : request.ipIntervalMs);
      const target = { address: request.ip!, fallbacks: request.fallbackIps, onFailover: (failover: AddressFailover) => this.failedOver(request, failover) };
      robots = await this.robots.fetch(request.url, target, this.fetcher, hop, (url) => this.routes.forUrl(url));
      // The site's own robots.txt answered from a fallback address: that is the address the turn reports.
      if (!hop && robots.exchanges[0]) base = { ...base, ip: robots.exchanges[0].address };
      this.metrics.robotsFetched(robots, performance.now() - robotsStarted);
      await this.stats.count('robots.fetched');
      // Before the policy is cached: should this fail, the job's retry asks for robots.txt again and records it then.
      await this.archive.record(robots.exchanges);
    }
    if (robots.hop) {
      await this.stats.count('robots.redirect-hop');
      await this.pipeline.send(QueueName.DnsResolve, { ...request, ip: undefined, robotsHop: { ...robots.hop, originIp: base.ip } });
      return null;
    }
    if (robots.policy.outcome === 'unreachable') return this.robotsUnreachable(request, base, robots);
    // Cached only once its sitemaps are sent: a crash in between fetches robots.txt again (the URL's lease
    // runs out) instead of leaving the site's sitemaps undiscovered for the whole cache TTL.
    await this.discoverSitemaps(request, robots.policy);
    await this.robots.remember(request.url, robots.policy);
    return {
      ...base,
      kind: 'robots-fetched',
      requested: true,
      status: robots.status ?? undefined,
      durationMs: robots.durationMs,
      crawlDelayMs: robots.policy.crawlDelayMs(),
      retry: crawlUrlOf(request),
    };
  }

  /**
   * "Disallow all for now" (RFC 9309 §2.3.1.4): the host waits for the next try, which backs off and
   * honours Retry-After, and is given up (set aside by the frontier) once robots.txt has failed for
   * DOWNLOADER_ROBOTS_UNREACHABLE_MAX_MS. The failed fetch is itself a deferral.
   */
  private async robotsUnreachable(request: FetchRequest, base: ReturnType<DownloaderService['base']>, robots: RobotsFetch): Promise<FetchOutcome> {
    const now = Date.now();
    const plan = await this.robots.failed(request.url, robots.retryAfterMs, now);
    await this.robots.remember(request.url, robots.policy, Math.max(1, plan.nextTryAt - now));
    await this.stats.count('deferred.robots-unreachable');
    // A failed robots.txt is an error of the site's like a failed page: `error.robots.refused`, `error.robots.status-500`…
    await this.stats.count(`error.robots.${robots.errorKind ?? (robots.status !== null ? `status-${robots.status}` : 'refused-hop')}`);
    return {
      ...base,
      kind: 'deferred',
      cause: 'robots',
      requested: true,
      status: robots.status ?? undefined,
      durationMs: robots.durationMs,
      retryAfterMs: plan.nextTryAt - now,
      retry: crawlUrlOf(request),
      robotsUnreachable: plan,
      ...(robots.error ? { error: robots.error } : {}),
      ...(robots.errorKind ? { errorKind: robots.errorKind } : {}),
    };
  }

  /**
   * The frontier paces an address when it hands URLs out; a busy pipeline can still deliver several of them
   * together (the first held up on the way, or hosts whose address the frontier did not know yet), so the
   * downloader keeps the interval too, between the requests it makes itself, at the address's interval as the
   * frontier paced it (grown with the domains it serves, 0 on a CDN range).
   *
   * Each request waits for the one before it to the address to have left, then the interval from that moment.
   * Counting from when the one before was due to leave is not enough: its timer can fire late (a GC pause, a
   * busy event loop), and the next one, due on time, would then follow it by less than the interval.
   */
  private async ipTurn(address: string, intervalMs = this.config.frontier.perIpIntervalMs) {
    const interval = intervalMs;
    if (interval <= 0) return;
    const before = this.lastTurnByIp.get(address);
    const turn = new AddressTurn();
    this.lastTurnByIp.set(address, turn);
    try {
      const leftAt = before === undefined ? -Infinity : (before.leftAt ?? (await before.left));
      const wait = leftAt + interval - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    } finally {
      turn.leave(Date.now());
    }
    if (this.lastTurnByIp.size > 10_000) this.forgetOldTurns();
  }

  /** Addresses whose last request left longer ago than the base interval (an address is paced at no more). */
  private forgetOldTurns() {
    const since = Date.now() - this.config.frontier.perIpIntervalMs;
    for (const [address, turn] of this.lastTurnByIp) {
      if (turn.leftAt !== undefined && turn.leftAt < since) this.lastTurnByIp.delete(address);
    }
  }

  /**
   * A site's sitemaps are announced by its robots.txt (`Sitemap:` lines, which may name other hosts) or, when
   * it names none, looked for at /sitemap.xml. They enter the crawl like any URL: filter, seen, frontier.
   * Found again at each robots.txt refresh, they are dropped by URL-seen.
   */
  private async discoverSitemaps(request: FetchRequest, policy: RobotsPolicy) {
    const { mode } = this.config.sitemaps;
    if (mode === 'off') return;
    let sitemaps = policy.sitemaps();
    if (sitemaps.length === 0 && mode === 'robots+probe') sitemaps = [new URL('/sitemap.xml', request.url).href];
    if (sitemaps.length === 0) return;
    await this.stats.count('sitemap.discovered', sitemaps.length);
    await this.pipeline.send(QueueName.FilterUrls, {
      v: SCHEMA_VERSION,
      urls: sitemaps.map((url) => ({ url, kind: 'sitemap' as const, depth: request.depth, source: 'sitemap' as const, hops: 0 })),
    });
  }

  private base(request: FetchRequest) {
    return { v: SCHEMA_VERSION, leaseId: request.leaseId, fetchId: request.fetchId, url: request.url, host: request.host, ip: request.ip } as const;
  }

  /**
   * Everything that hands the page's answer on. When that fails (Redis, S3 down), the answer is kept for the
   * job's retry, which resumes from it: the site is not asked for the page twice.
   */
  private async finishPage(request: FetchRequest, answer: PageAnswer, plugins: PluginClaims, crawlDelayMs: number | undefined): Promise<FetchOutcome> {
    try {
      // Once: a retry that resumes from the kept answer does not record the exchange again.
      if (answer.response && !answer.archived) {
        await this.archive.record([{ url: request.url, address: answer.response.address, response: answer.response, previousBodyHash: request.revisit?.bodyHash }]);
        answer.archived = true;
      }
      // The address the request went to (a fallback when connecting to the first failed): the frontier paces the
      // host on it from now on.
      const ip = answer.response?.address ?? request.ip;
      return { ...(await this.handOn(request, answer, plugins)), crawlDelayMs, ip };
    } catch (error) {
      this.answers.keep(request.leaseId, { answer, crawlDelayMs }, leaseEnd(request, this.config.frontier.leaseMs));
      throw error;
    }
  }

  /** Whether an earlier delivery of this request got the page's answer and kept it (the retry resumes from it). */
  resumes(request: FetchRequest): boolean {
    return !request.robotsHop && this.answers.has(request.leaseId);
  }

  /** The request itself, logged once (a resumed delivery does not log it again). */
  private async requestPage(request: FetchRequest, address: string, plugins: PluginClaims): Promise<PageAnswer> {
    const sitemap = request.kind === 'sitemap';
    // Content-type routing happens on the headers, before a byte of the body is read.
    const wanted = sitemap ? SITEMAP_TYPES : HTML_TYPES;
    const claimOf = sitemap ? () => undefined : pluginFor(plugins);
    const site = (await this.sites.forHost(request.host)).settings;
    const cookie = await this.cookies.header(new URL(request.url), site.cookies);
    // The address's turn last, right before the request goes: the reads above may wait on the state store, and
    // a turn taken before them could let the next request to the address overtake this one.
    await this.ipTurn(address, request.ipIntervalMs);
    const time = new Date().toISOString();
    const started = performance.now();
    let response;
    try {
      response = await this.fetcher.get(request.url, {
        address,
        fallbacks: request.fallbackIps,
        onFailover: (failover) => this.failedOver(request, failover),
        maxBytes: sitemap ? this.config.sitemaps.maxBytes : this.config.downloader.maxBodyBytes,
        maxBytesFor: (type) => claimOf(type)?.claims.maxBytes,
        wantBody: (status, type) => status >= 200 && status < 300 && (wanted.test(type) || claimOf(type) !== undefined),
        // The crawler's conditional headers over the site's: the schema refuses those names there anyway.
        headers: { ...site.headers, ...(cookie ? { cookie } : {}), ...conditionalHeaders(request) },
        userAgent: site.userAgent,
        route: this.routes.forHost(request.host),
      });
    } catch (error) {
      const message = describeError(error);
      const errorKind = classifyFetchError(error);
      // The time is reported, but the adaptive delay keeps to responses: a timeout is the strike rule's.
      const durationMs = Math.round(performance.now() - started);
      this.fetchLog.record({
        time,
        url: request.url,
        depth: request.depth,
        status: null,
        contentType: null,
        length: null,
        location: null,
        durationMs,
        error: message,
        errorKind,
      });
      this.metrics.fetched(sitemap ? 'sitemap' : 'page', null, durationMs);
      return { time, failed: { message, errorKind, durationMs } };
    }
    this.fetchLog.record({
      time,
      url: request.url,
      depth: request.depth,
      status: response.status,
      contentType: response.contentType || null,
      length: response.body?.length ?? (Number(response.headers['content-length']) || null),
      ...(response.truncated ? { truncated: true } : {}),
      location: response.headers.location ?? null,
      durationMs: response.durationMs,
      address: response.address,
    });
    this.metrics.fetched(sitemap ? 'sitemap' : 'page', response.status, response.durationMs, response.decodedFrom ?? response.body?.length);
    return { time, response };
  }

  /** A connection to one of the host's addresses failed and the fetch moves on to the next: counted and logged once. */
  private async failedOver(request: FetchRequest, { from, to, error }: AddressFailover): Promise<void> {
    this.metrics.addressFailover(to);
    await this.stats.count('fetch.address-failover');
    this.logger?.warn({ event: 'address-failover', url: request.url, host: request.host, from, to, error: describeError(error) });
  }

  /**
   * Counts the answer once, as the site gave it: not in `handOn`, which a retry runs again from the kept
   * answer when handing on failed (S3 or Redis down), and would count the one request as many times.
   */
  private async countAnswer(request: FetchRequest, { response, failed }: PageAnswer): Promise<void> {
    if (failed) {
      await this.stats.count(`error.fetch.${failed.errorKind}`);
      return;
    }
    await this.stats.count('fetched');
    // Body bytes as read (what FRONTIER_MAX_BYTES spends).
    if (response.body?.length) await this.stats.count('bytes.fetched', response.body.length);
    // A sitemap that is not there (most often the crawler's own guess at /sitemap.xml) is no error of the site's.
    const missingSitemap = request.kind === 'sitemap' && (response.status === 404 || response.status === 410);
    await this.stats.count(missingSitemap ? 'sitemap.missing' : response.status === 304 ? 'status.304' : `status.${Math.floor(response.status / 100)}xx`);
    const revisit = revisitOf(request, response, this.config.frontier.recrawl);
    if (revisit && request.revisit) await this.stats.count(revisit.changed ? 'revisit.changed' : 'revisit.unchanged');
  }

  /**
   * The response's cookies into its site's jar, once, as the site gave them (a retry resuming from the kept
   * answer does not come here again), and before a redirect is followed: a login that sets its session and
   * redirects has its target asked for with it. Counted (`cookies.stored`, `cookies.deleted`, `cookies.refused`).
   */
  private async keepCookies(request: FetchRequest, { response }: PageAnswer): Promise<void> {
    if (!response?.setCookies.length) return;
    const kept = await this.cookies.remember(new URL(request.url), response.setCookies);
    for (const [what, count] of Object.entries(kept)) if (count) await this.stats.count(`cookies.${what}`, count);
  }

  /** Stages the body and sends it on (parser or plugin), follows a redirect: the outcome. */
  private async handOn(request: FetchRequest, answer: PageAnswer, plugins: PluginClaims): Promise<FetchOutcome> {
    const base = this.base(request);
    const { time, response, failed } = answer;
    const bytes = response?.body?.length ? { bytes: response.body.length } : {};
    // The URL goes back with the outcome: whether the failure is worth another try is the frontier's call.
    if (failed)
      return { ...base, kind: 'error', requested: true, error: failed.message, errorKind: failed.errorKind, durationMs: failed.durationMs, retry: crawlUrlOf(request) };
    const sitemap = request.kind === 'sitemap';
    const claimOf = sitemap ? () => undefined : pluginFor(plugins);
    const location = response.headers.location ?? null;
    const revisit = revisitOf(request, response, this.config.frontier.recrawl);
    if (response.status >= 300 && response.status < 400 && location) await this.followLater(request, location);
    // An unchanged page is not parsed, stored or mined again.
    if (response.body && revisit?.changed !== false) {
      const bodyKey = await this.staging.stage(response.body);
      const fetched: FetchedPage = {
        v: SCHEMA_VERSION,
        fetchId: request.fetchId,
        url: request.url,
        ...(sitemap ? { kind: 'sitemap' as const } : {}),
        depth: request.depth,
        status: response.status,
        headers: bodyHeaders(response),
        contentType: response.contentType,
        bodyKey,
        length: response.body.length,
        truncated: response.truncated,
        fetchedAt: time,
        ...(request.referrer ? { referrer: request.referrer } : {}),
      };
      // A response of a claimed type, or an HTML page a plugin takes before the parser (it hands it on).
      // The site's `render` (from the settings file) over the render plugin's own claims.
      const render = sitemap ? undefined : (await this.sites.forHost(request.host)).settings.render;
      const plugin = claimOf(response.contentType) ?? (!sitemap && HTML_TYPES.test(response.contentType) ? plugins.claimsPage(request.url, render) : undefined);
      if (plugin) {
        await this.pipeline.send(pluginQueue(plugin.name), { ...fetched, hook: 'fetched', ...(request.referrer ? { source: request.referrer } : {}) });
        await this.stats.count(`plugin.routed.${plugin.name}`);
      } else {
        await this.pipeline.send(QueueName.Parse, fetched);
      }
    }
    const retryAfterMs = parseRetryAfter(response.headers['retry-after']);
    return {
      ...base,
      kind: 'fetched',
      requested: true,
      status: response.status,
      durationMs: response.durationMs,
      retryAfterMs,
      retry: crawlUrlOf(request),
      revisit,
      ...bytes,
    };
  }

  /** A redirect target is a new URL like any other: filter, seen, frontier (the filter enforces the hop limit). */
  private async followLater(request: FetchRequest, location: string) {
    let target: string;
    try {
      target = new URL(location, request.url).href;
    } catch {
      await this.stats.count('error.bad-redirect');
      return;
    }
    await this.pipeline.send(QueueName.FilterUrls, {
      v: SCHEMA_VERSION,
      urls: [{ url: target, depth: request.depth, source: 'redirect', hops: request.hops + 1 }],
    });
  }

  onApplicationShutdown() {
    return this.fetcher.close();
  }
}

/** The plugin a response goes to: the one claiming its Content-Type, never for HTML (that is the parser's). */
function pluginFor(claims: PluginClaims): (contentType: string) => PluginManifest | undefined {
  if (claims.fetchesNothing) return () => undefined;
  return (contentType) => (HTML_TYPES.test(contentType) ? undefined : claims.forContentType(contentType));
}

/** The body travels decoded: the headers that describe the bytes on the wire no longer apply to it. */
function bodyHeaders(response: FetchResponse): Record<string, string> {
  if (!response.encoding) return response.headers;
  const { 'content-encoding': _encoding, 'content-length': _length, ...rest } = response.headers;
  return rest;
}

/** A page's request as it ended: its answer, or how it failed. */
type PageAnswer =
  | { time: string; response: FetchResponse; failed?: undefined; archived?: boolean }
  | { time: string; response?: undefined; failed: { message: string; errorKind: FetchErrorKind; durationMs: number } };

/** The URL of a request, as the frontier queues it (to put it back). */
function crawlUrlOf(request: FetchRequest): CrawlUrl {
  const { url, kind, depth, source, hops, attempts, failures, priority, revisit, referrer, lastmod, changefreq } = request;
  return {
    url,
    kind,
    depth,
    source,
    hops,
    attempts,
    failures,
    priority,
    revisit,
    ...(referrer ? { referrer } : {}),
    ...(lastmod !== undefined ? { lastmod } : {}),
    ...(changefreq ? { changefreq } : {}),
  };
}

/** A refetch asks only for a newer version: If-None-Match / If-Modified-Since from the last fetch. */
function conditionalHeaders(request: FetchRequest): Record<string, string> | undefined {
  const { etag, lastModified } = request.revisit ?? {};
  const headers: Record<string, string> = {};
  if (etag) headers['if-none-match'] = etag;
  if (lastModified) headers['if-modified-since'] = lastModified;
  return Object.keys(headers).length ? headers : undefined;
}

/**
 * For an HTML page answered 200 or 304: whether it changed since the last fetch (304, or the same body
 * hash, means no), its validators for the next conditional request, and the end of its freshness lifetime
 * (`Cache-Control: max-age`, else `Expires`; see httpFreshness). `no-store` keeps no validators: the next
 * fetch is unconditional. A first fetch with recrawls off answers nothing: no later fetch will compare, so
 * the body is not hashed (a SHA-256 of every page, ~15 µs for 30 KB).
 */
function revisitOf(request: FetchRequest, response: FetchResponse, recrawl: boolean): FetchOutcome['revisit'] {
  const previous = request.revisit;
  if (!recrawl && !previous) return undefined;
  const { freshUntil: expiresAt, noStore } = httpFreshness(response.headers, Date.now());
  const validators = noStore
    ? {}
    : response.status === 304
      ? { etag: response.headers.etag ?? previous?.etag, lastModified: response.headers['last-modified'] ?? previous?.lastModified }
      : { etag: response.headers.etag, lastModified: response.headers['last-modified'] };
  if (response.status === 304) return { changed: false, ...validators, bodyHash: previous?.bodyHash, expiresAt };
  if (response.status !== 200 || !response.body) return undefined;
  const hash = bodyHash(response.body);
  return { changed: hash !== previous?.bodyHash, ...validators, bodyHash: hash, expiresAt };
}

function describeError(error: unknown): string {
  const e = error as { code?: string; name?: string; message?: string; cause?: { code?: string } };
  return [e.code ?? e.cause?.code ?? e.name, e.message].filter(Boolean).join(': ');
}

/** One request's turn at an address: the moment it left, which the next request to the address waits for. */
class AddressTurn {
  leftAt: number | undefined;
  readonly left: Promise<number>;
  private resolve!: (at: number) => void;

  constructor() {
    this.left = new Promise((resolve) => (this.resolve = resolve));
  }

  leave(at: number) {
    this.leftAt = at;
    this.resolve(at);
  }
}
