import { Inject, Injectable } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { FetchLog } from '@crawler/logging';
import { RobotsPolicy, robotsCacheKey, robotsUrlFor } from '@crawler/robots';
import { STATE_STORE, StateStore } from '@crawler/state';
import { HttpFetcher } from './http-fetcher';

/** Parsed policies kept in process, so a host's robots.txt is parsed once per process, not once per URL. */
const LOCAL_CACHE_SIZE = 10_000;

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
  private readonly store: StateStore;
  private readonly local = new Map<string, { policy: RobotsPolicy; expires: number }>();

  constructor(
    @Inject(STATE_STORE) state: StateStore,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
    private readonly fetchLog: FetchLog,
  ) {
    this.store = state.namespace('robots');
  }

  /** The cached policy for a page's site, or null when robots.txt must be fetched first. */
  async cached(pageUrl: string): Promise<RobotsPolicy | null> {
    const key = robotsCacheKey(pageUrl);
    const hit = this.local.get(key);
    if (hit && hit.expires > Date.now()) return hit.policy;
    const stored = await this.store.get(key);
    if (!stored) return null;
    let parsed: RobotsPolicy;
    let expires: number;
    try {
      const entry = JSON.parse(stored);
      parsed = RobotsPolicy.fromJSON(entry.policy);
      expires = entry.expires;
    } catch {
      // A corrupt or foreign cache entry: fetch robots.txt again rather than fail every turn of the host.
      return null;
    }
    this.remember(key, parsed, expires);
    return parsed;
  }

  /** Fetches, logs, caches and returns the site's policy. Follows up to maxRedirects same-site redirects. */
  async fetch(pageUrl: string, address: string, fetcher: HttpFetcher): Promise<RobotsFetch> {
    const { userAgent, robotsMaxBytes, maxRedirects, robotsCacheTtlMs, robotsErrorTtlMs } = this.config.downloader;
    let url = robotsUrlFor(pageUrl);
    let durationMs = 0;
    let status: number | null = null;
    let policy: RobotsPolicy;
    try {
      for (let hop = 0; ; hop++) {
        const response = await fetcher.get(url, { address, maxBytes: robotsMaxBytes, wantBody: (s) => s >= 200 && s < 300 });
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
          // Another site means another address to vet; RFC 9309 lets us treat it as unavailable (allow all).
          if (next.host !== new URL(url).host || next.protocol !== new URL(url).protocol) {
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
      const message = (error as Error).message;
      this.fetchLog.robots(url, null, null, message);
      this.fetchLog.record({ time: new Date().toISOString(), url, status: null, contentType: null, length: null, location: null, durationMs, error: message, robots: true });
      policy = RobotsPolicy.unreachable(url, userAgent);
    }
    const ttl = policy.kind === 'disallow-all' ? robotsErrorTtlMs : robotsCacheTtlMs;
    const expires = Date.now() + ttl;
    const key = robotsCacheKey(pageUrl);
    await this.store.set(key, JSON.stringify({ policy: policy.toJSON(), expires }), ttl);
    this.remember(key, policy, expires);
    return { policy, status, durationMs };
  }

  private remember(key: string, policy: RobotsPolicy, expires: number) {
    if (this.local.size >= LOCAL_CACHE_SIZE) this.local.delete(this.local.keys().next().value!);
    this.local.set(key, { policy, expires });
  }
}
