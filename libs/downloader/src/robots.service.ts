import { Inject, Injectable } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig, portRules } from '@crawler/config';
import { FetchLog } from '@crawler/logging';
import { nextRobotsTry, ROBOTS_NAMESPACE, RobotsCache, RobotsFailures, RobotsPolicy, robotsUrlFor } from '@crawler/robots';
import { STATE_STORE, StateStore } from '@crawler/state';
import { PortPolicy } from '@crawler/url';
import type { FetchErrorKind } from '@crawler/contracts';
import { classifyFetchError } from './http-errors';
import type { Exchange } from './exchange-archive.service';
import type { FetchRoute } from './fetch-routes';
import { AddressTarget, HttpFetcher } from './http-fetcher';
import { parseRetryAfter } from '@crawler/net';

/** Where a robots.txt redirect chain stands: the URL to fetch next and the URLs that redirected so far. */
export interface RobotsHop {
  url: string;
  chain: string[];
}

export interface RobotsFetch {
  policy: RobotsPolicy;
  status: number | null;
  durationMs: number;
  /**
   * The chain goes on at another host: its address must be vetted before anything is sent there, so the
   * turn continues once the resolver has answered. `policy` is then meaningless.
   */
  hop?: RobotsHop;
  /** What a failed answer's Retry-After asked for, in ms. */
  retryAfterMs?: number;
  /** Why no answer came (the error, and its kind: `refused`, `timeout-connect`…), or why the chain may not go on. */
  error?: string;
  errorKind?: FetchErrorKind;
  /** Every response of the chain, for the WARC archive. */
  exchanges: Exchange[];
}

/**
 * robots.txt per RFC 9309: fetched through the same vetted connection as pages, cached per
 * scheme+host+port in the shared state store (so every downloader replica agrees), and parsed once.
 */
@Injectable()
export class RobotsService {
  private readonly cache: RobotsCache;
  private readonly ports: PortPolicy;

  constructor(
    @Inject(STATE_STORE) state: StateStore,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
    private readonly fetchLog: FetchLog,
  ) {
    this.cache = new RobotsCache(state.namespace(ROBOTS_NAMESPACE));
    this.ports = new PortPolicy(portRules(config));
  }

  /** The cached policy for a page's site, or null when robots.txt must be fetched first. */
  cached(pageUrl: string): Promise<RobotsPolicy | null> {
    return this.cache.get(pageUrl);
  }

  /**
   * Fetches and logs the site's robots.txt, starting at `from` when a redirect chain goes on. Redirects
   * are followed (RFC 9309 §2.3.1.2: at least five, across hosts) up to DOWNLOADER_MAX_REDIRECTS: on the
   * same host name at once (its address is the vetted one), to another host by answering `hop`. The rules
   * found at the end apply to the page's own site. A hop to a port the URL filter refuses
   * (`Location: http://same-host:6379/`) is never requested: robots.txt is then unreachable, as for a
   * refused address. Each request goes the way (proxy, TLS options) `routeFor` gives its URL, the site's own. `remember` caches the policy.
   * `target`: the vetted address, and the host's other ones to fall back to when connecting fails; a redirect on the
   * same host goes to the address that answered.
   */
  async fetch(pageUrl: string, vetted: AddressTarget, fetcher: HttpFetcher, from?: RobotsHop, routeFor?: (url: string) => FetchRoute): Promise<RobotsFetch> {
    const { userAgent, robotsMaxBytes, maxRedirects } = this.config.downloader;
    const siteRobotsUrl = robotsUrlFor(pageUrl);
    let url = from?.url ?? siteRobotsUrl;
    const chain = [...(from?.chain ?? [])];
    let durationMs = 0;
    let hopStarted = performance.now();
    const exchanges: Exchange[] = [];
    let target = vetted;
    try {
      for (;;) {
        hopStarted = performance.now();
        // One byte past the limit: the policy then sees the file was cut and drops a half-cut last line.
        const response = await fetcher.get(url, { ...target, maxBytes: robotsMaxBytes + 1, wantBody: (s) => s >= 200 && s < 300, route: routeFor?.(url) });
        exchanges.push({ url, address: response.address, response });
        target = { ...target, address: response.address };
        durationMs += response.durationMs;
        const status = response.status;
        const body = response.body?.toString('utf8') ?? null;
        const location = response.headers.location;
        // Logged as kept: the byte read past the limit only tells that the file was longer.
        const kept = response.body?.subarray(0, robotsMaxBytes) ?? null;
        const cut = kept !== null && kept.length < (response.body?.length ?? 0);
        this.fetchLog.robots(url, status, cut ? kept.toString('utf8') : body, undefined, chain);
        this.fetchLog.record({
          time: new Date().toISOString(),
          url,
          status,
          contentType: response.contentType || null,
          length: kept?.length ?? null,
          ...(cut || response.truncated ? { truncated: true } : {}),
          location: location ?? null,
          durationMs: response.durationMs,
          robots: true,
          address: response.address,
        });
        const retryAfterMs = parseRetryAfter(response.headers['retry-after']);
        if (status >= 300 && status < 400) {
          const next = location ? redirectTarget(location, url) : null;
          chain.push(url);
          // More redirects than followed, or one that leads nowhere fetchable: "unavailable" (§2.3.1.2, §2.3.1.3).
          if (!next || chain.length > maxRedirects) return { policy: RobotsPolicy.fromResponse(404, null, siteRobotsUrl, userAgent), status, durationMs, exchanges };
          const portRefusal = this.ports.refusal(next);
          if (portRefusal) return { ...this.refused(pageUrl, { url: next.href, chain }, portRefusal), exchanges };
          if (next.hostname !== new URL(url).hostname)
            return { policy: RobotsPolicy.unreachable(siteRobotsUrl, userAgent), status, durationMs, hop: { url: next.href, chain }, exchanges };
          url = next.href;
          continue;
        }
        const policy = RobotsPolicy.fromResponse(status, body, siteRobotsUrl, userAgent, { maxBytes: robotsMaxBytes });
        return { policy, status, durationMs, retryAfterMs, exchanges };
      }
    } catch (error) {
      // A timeout is a slow host: its time counts towards the adaptive delay like any request's.
      durationMs += Math.round(performance.now() - hopStarted);
      const message = (error as Error).message;
      this.fetchLog.robots(url, null, null, message, chain);
      this.fetchLog.record({
        time: new Date().toISOString(),
        url,
        status: null,
        contentType: null,
        length: null,
        location: null,
        durationMs,
        error: message,
        robots: true,
      });
      return { policy: RobotsPolicy.unreachable(siteRobotsUrl, userAgent), status: null, durationMs, error: message, errorKind: classifyFetchError(error), exchanges };
    }
  }

  /** A redirect led to a host that did not resolve or may not be reached: robots.txt is unreachable (disallow all). */
  refused(pageUrl: string, hop: RobotsHop, refusal: string): RobotsFetch {
    this.fetchLog.robots(hop.url, null, null, refusal, hop.chain);
    return { policy: RobotsPolicy.unreachable(robotsUrlFor(pageUrl), this.config.downloader.userAgent), status: null, durationMs: 0, error: refusal, exchanges: [] };
  }

  /**
   * Caches a fetched policy for every downloader replica. An unreachable one is cached until its next try
   * (`ttlMs`), so that every turn of the site before then waits without a request.
   */
  async remember(pageUrl: string, policy: RobotsPolicy, ttlMs?: number): Promise<void> {
    await this.cache.put(pageUrl, policy, ttlMs ?? this.config.downloader.robotsCacheTtlMs);
    if (policy.outcome !== 'unreachable') await this.cache.clearFailures(pageUrl);
  }

  /** Counts one more failure of the site's robots.txt and plans the next try (or giving up). */
  async failed(pageUrl: string, retryAfterMs: number | undefined, now = Date.now()): Promise<RobotsFailures & { giveUp: boolean }> {
    const { robotsRetryMs, robotsErrorTtlMs, robotsUnreachableMaxMs } = this.config.downloader;
    const plan = nextRobotsTry(await this.cache.failures(pageUrl), now, retryAfterMs, {
      retryMs: robotsRetryMs,
      maxWaitMs: robotsErrorTtlMs,
      giveUpAfterMs: robotsUnreachableMaxMs,
    });
    const { giveUp, ...failures } = plan;
    // Given up, the run ends: should the host come back (a later crawl, an operator), it starts afresh.
    if (giveUp) await this.cache.clearFailures(pageUrl);
    // Kept well past the give-up time: the host's next turn may come long after its next try was due (other
    // hosts' turns, per-IP pacing), and a record gone by then would start the run of failures again, for ever.
    else await this.cache.setFailures(pageUrl, failures, plan.giveUpAt - now + robotsUnreachableMaxMs + robotsErrorTtlMs);
    return plan;
  }

  /** The site's run of failures, while its unreachable answer is cached. */
  failures(pageUrl: string): Promise<RobotsFailures | null> {
    return this.cache.failures(pageUrl);
  }
}

/** An http(s) URL to follow, or null (no usable Location). */
function redirectTarget(location: string, base: string): URL | null {
  try {
    const next = new URL(location, base);
    return next.protocol === 'http:' || next.protocol === 'https:' ? next : null;
  } catch {
    return null;
  }
}
