import type { StateStore } from '@crawler/state';
import { RobotsPolicy } from './robots-policy';
import type { RobotsFailures } from './robots-retry';
import { robotsCacheKey } from './robots-url';

/** Parsed policies kept in process, so a site's robots.txt is parsed once per process, not once per URL. */
const LOCAL_CACHE_SIZE = 10_000;

/**
 * robots.txt answers shared by every process through the state store (the downloader writes them, the
 * URL filter and the downloader read them), keyed per scheme+host+port, with parsed policies memoised.
 */
export class RobotsCache {
  /** Two generations: the older is dropped when the newer fills (no per-entry eviction cost). */
  private local = new Map<string, { policy: RobotsPolicy; expires: number }>();
  private localBefore = new Map<string, { policy: RobotsPolicy; expires: number }>();

  /** `store`: the namespace that holds the cache (the downloader's `robots`). */
  constructor(private readonly store: StateStore) {}

  /** The cached policy for a page's site, or null when robots.txt must be fetched (or the entry is unusable). */
  async get(pageUrl: string | URL): Promise<RobotsPolicy | null> {
    const key = robotsCacheKey(pageUrl);
    const known = this.known(key);
    if (known) return known;
    const stored = await this.store.get(key);
    if (!stored) return null;
    try {
      const entry = JSON.parse(stored);
      const policy = RobotsPolicy.fromJSON(entry.policy);
      this.remember(key, policy, entry.expires);
      return policy;
    } catch {
      // A corrupt or foreign entry: robots.txt is fetched again rather than failing every turn of the host.
      return null;
    }
  }

  /** The policy this process holds for a page's site, without asking the store; undefined when it holds none. */
  getKnown(pageUrl: string | URL): RobotsPolicy | undefined {
    return this.known(robotsCacheKey(pageUrl));
  }

  private known(key: string): RobotsPolicy | undefined {
    const hit = this.local.get(key) ?? this.localBefore.get(key);
    return hit && hit.expires > Date.now() ? hit.policy : undefined;
  }

  async put(pageUrl: string, policy: RobotsPolicy, ttlMs: number): Promise<void> {
    const key = robotsCacheKey(pageUrl);
    const expires = Date.now() + ttlMs;
    await this.store.set(key, JSON.stringify({ policy: policy.toJSON(), expires }), ttlMs);
    this.remember(key, policy, expires);
  }

  /** The site's current run of robots.txt failures, or null when its last fetch did not fail. */
  async failures(pageUrl: string | URL): Promise<RobotsFailures | null> {
    const stored = await this.store.get(failuresKey(pageUrl));
    if (!stored) return null;
    try {
      const f = JSON.parse(stored) as RobotsFailures;
      return [f.since, f.tries, f.nextTryAt, f.giveUpAt].every(Number.isInteger) ? f : null;
    } catch {
      return null; // unreadable: the run of failures starts again
    }
  }

  /** Kept `ttlMs` (past the give-up time: a record that expires early only restarts the count). */
  setFailures(pageUrl: string | URL, failures: RobotsFailures, ttlMs: number): Promise<void> {
    return this.store.set(failuresKey(pageUrl), JSON.stringify(failures), ttlMs);
  }

  clearFailures(pageUrl: string | URL): Promise<void> {
    return this.store.del(failuresKey(pageUrl));
  }

  private remember(key: string, policy: RobotsPolicy, expires: number) {
    if (this.local.size >= LOCAL_CACHE_SIZE / 2) {
      this.localBefore = this.local;
      this.local = new Map();
    }
    this.local.set(key, { policy, expires });
  }
}

const failuresKey = (pageUrl: string | URL) => `failed.${robotsCacheKey(pageUrl)}`;

/** The state-store namespace of the robots cache. */
export const ROBOTS_NAMESPACE = 'robots';
