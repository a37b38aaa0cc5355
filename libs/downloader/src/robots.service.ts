import { Inject, Injectable } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { FetchLog } from '@crawler/logging';
import { ROBOTS_NAMESPACE, RobotsCache, RobotsPolicy, robotsUrlFor } from '@crawler/robots';
import { STATE_STORE, StateStore } from '@crawler/state';
import { HttpFetcher } from './http-fetcher';

export interface RobotsFetch {
  policy: RobotsPolicy;
  status: number | null;
  durationMs: number;
}

/**
 * robots.txt per RFC 9309: fetched through the same vetted connection as pages, cached per
 * scheme+host+port in the shared state store (so every downloader replica agrees), and parsed once.
 */
@Injectable()
export class RobotsService {
  private readonly cache: RobotsCache;

  constructor(
    @Inject(STATE_STORE) state: StateStore,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
    private readonly fetchLog: FetchLog,
  ) {
    this.cache = new RobotsCache(state.namespace(ROBOTS_NAMESPACE));
  }

  /** The cached policy for a page's site, or null when robots.txt must be fetched first. */
  cached(pageUrl: string): Promise<RobotsPolicy | null> {
    return this.cache.get(pageUrl);
  }

  /**
   * Fetches, logs and returns the site's policy; `remember` caches it. Follows up to maxRedirects same-site
   * redirects.
   */
  async fetch(pageUrl: string, address: string, fetcher: HttpFetcher): Promise<RobotsFetch> {
    const { userAgent, robotsMaxBytes, maxRedirects } = this.config.downloader;
    let url = robotsUrlFor(pageUrl);
    let durationMs = 0;
    let status: number | null = null;
    let policy: RobotsPolicy;
    let hopStarted = performance.now();
    try {
      for (let hop = 0; ; hop++) {
        hopStarted = performance.now();
        // One byte past the limit: the policy then sees the file was cut and drops a half-cut last line.
        const response = await fetcher.get(url, { address, maxBytes: robotsMaxBytes + 1, wantBody: (s) => s >= 200 && s < 300 });
        durationMs += response.durationMs;
        status = response.status;
        const body = response.body?.toString('utf8') ?? null;
        this.fetchLog.robots(url, status, body);
        this.fetchLog.record({
          time: new Date().toISOString(),
          url,
          status,
          contentType: response.contentType || null,
          length: response.body?.length ?? null,
          location: response.headers.location ?? null,
          durationMs: response.durationMs,
          robots: true,
        });
        const location = response.headers.location;
        if (status >= 300 && status < 400 && location && hop < maxRedirects) {
          const next = new URL(location, url);
          // The same host name (http → https, another port) keeps its vetted address; another host would need
          // its own vetting, and RFC 9309 lets us treat that robots.txt as unavailable (allow all).
          if (next.hostname !== new URL(url).hostname || !/^https?:$/.test(next.protocol)) {
            policy = RobotsPolicy.fromResponse(404, null, url, userAgent);
            break;
          }
          url = next.href;
          continue;
        }
        // More redirects than allowed also count as "unavailable" (RFC 9309 §2.3.1.2).
        const effective = status >= 300 && status < 400 ? 404 : status;
        policy = RobotsPolicy.fromResponse(effective, body, url, userAgent, { maxBytes: robotsMaxBytes });
        break;
      }
    } catch (error) {
      // A timeout is a slow host: its time counts towards the adaptive delay like any request's.
      durationMs += Math.round(performance.now() - hopStarted);
      const message = (error as Error).message;
      this.fetchLog.robots(url, null, null, message);
      this.fetchLog.record({ time: new Date().toISOString(), url, status: null, contentType: null, length: null, location: null, durationMs, error: message, robots: true });
      policy = RobotsPolicy.unreachable(url, userAgent);
    }
    return { policy, status, durationMs };
  }

  /** Caches a fetched policy for every downloader replica. */
  remember(pageUrl: string, policy: RobotsPolicy): Promise<void> {
    const { robotsCacheTtlMs, robotsErrorTtlMs } = this.config.downloader;
    return this.cache.put(pageUrl, policy, policy.kind === 'disallow-all' ? robotsErrorTtlMs : robotsCacheTtlMs);
  }
}
