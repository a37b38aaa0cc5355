/** How often and since when a site's robots.txt has failed (5xx, 429, unreachable), and when it is tried next. */
export interface RobotsFailures {
  /** First failure of this run of failures (ms since epoch). */
  since: number;
  /** Failed tries so far. */
  tries: number;
  /** When robots.txt is tried again (ms since epoch). */
  nextTryAt: number;
  /** When the site is given up if robots.txt still fails (ms since epoch). */
  giveUpAt: number;
}

export interface RobotsRetrySettings {
  /** First wait; doubled at each failure after it. */
  retryMs: number;
  /** Longest wait, and the cap on the server's Retry-After. */
  maxWaitMs: number;
  /** The site is given up this long after the first failure. */
  giveUpAfterMs: number;
}

/**
 * The next try after a failed robots.txt fetch (RFC 9309 §2.3.1.4 leaves the schedule to the crawler):
 * exponential backoff from `retryMs`, with ±25% jitter so that sites that failed together (one outage) are
 * not retried in lockstep, never sooner than the server's Retry-After (capped at `maxWaitMs`), never longer
 * than `maxWaitMs`, and not past the give-up time unless Retry-After asks for that: the last try falls on it
 * (or on the Retry-After beyond it), and a failure at or after it gives the site up.
 */
export function nextRobotsTry(
  previous: Pick<RobotsFailures, 'since' | 'tries'> | null,
  now: number,
  retryAfterMs: number | undefined,
  settings: RobotsRetrySettings,
  random: () => number = Math.random,
): RobotsFailures & { giveUp: boolean } {
  const since = previous?.since ?? now;
  const tries = (previous?.tries ?? 0) + 1;
  const giveUpAt = since + settings.giveUpAfterMs;
  if (now >= giveUpAt) return { since, tries, nextTryAt: now, giveUpAt, giveUp: true };
  const backoff = Math.min(settings.maxWaitMs, settings.retryMs * 2 ** Math.min(tries - 1, 30));
  const jittered = Math.round(backoff * (0.75 + random() * 0.5));
  const retryAfter = Math.min(settings.maxWaitMs, retryAfterMs ?? 0);
  // The backoff stops at the give-up time (the last try falls on it); the server's Retry-After is obeyed even past it.
  const nextTryAt = Math.max(Math.min(now + Math.max(1, jittered), giveUpAt), now + retryAfter);
  return { since, tries, nextTryAt, giveUpAt, giveUp: false };
}
