import type { FetchOutcome } from '@crawler/contracts';
import type { HostPoliteness } from '@crawler/frontier-store';

export interface PolitenessSettings {
  minDelayMs: number;
  delayMultiplier: number;
  recentResponses: number;
  maxBackoffMs: number;
}

export type DelayCause = 'none' | 'floor' | 'override' | 'robots' | 'latency' | 'retry-after' | 'backoff';

export interface DelayDecision {
  delayMs: number;
  cause: DelayCause;
  politeness: HostPoliteness;
}

/** A 429 or a 503 asks us to slow down: back off, however the request otherwise went. */
export const isSlowDown = (status?: number) => status === 429 || status === 503;

/**
 * How long a host rests after a turn, and why:
 * - a turn that sent no request (robots disallowed it, the name did not resolve) owes nothing;
 * - after a 429/503: the larger of Retry-After and an exponential backoff (floor × 2^n, capped);
 * - otherwise: max(robots Crawl-delay, floor — or the operator's override — , multiplier × the mean of
 *   the last few response times).
 */
export function politeDelay(
  outcome: FetchOutcome,
  previous: HostPoliteness | undefined,
  settings: PolitenessSettings,
  overrideMs?: number | null,
): DelayDecision {
  const recentMs = [...(previous?.recentMs ?? [])];
  if (!outcome.requested) {
    return { delayMs: 0, cause: 'none', politeness: { recentMs, backoff: previous?.backoff ?? 0, delayMs: 0, cause: 'none' } };
  }
  recentMs.push(outcome.durationMs);
  recentMs.splice(0, Math.max(0, recentMs.length - settings.recentResponses));
  if (isSlowDown(outcome.status)) {
    const backoff = (previous?.backoff ?? 0) + 1;
    const exponential = Math.min(settings.maxBackoffMs, Math.max(settings.minDelayMs, 1000) * 2 ** (backoff - 1));
    const retryAfter = Math.min(settings.maxBackoffMs, outcome.retryAfterMs ?? 0);
    // Never less than the host's usual rest: the operator's override and Crawl-delay still hold.
    const usual = Math.max(overrideMs ?? settings.minDelayMs, outcome.crawlDelayMs ?? 0);
    const [delayMs, cause]: [number, DelayCause] =
      retryAfter >= exponential && retryAfter >= usual ? [retryAfter, 'retry-after'] : exponential >= usual ? [exponential, 'backoff'] : [usual, overrideMs != null ? 'override' : 'robots'];
    return { delayMs, cause, politeness: { recentMs, backoff, delayMs, cause } };
  }
  const mean = recentMs.reduce((a, b) => a + b, 0) / recentMs.length;
  const candidates: [number, DelayCause][] = [
    overrideMs != null ? [overrideMs, 'override'] : [settings.minDelayMs, 'floor'],
    [outcome.crawlDelayMs ?? 0, 'robots'],
    [Math.round(settings.delayMultiplier * mean), 'latency'],
  ];
  const [delayMs, cause] = candidates.reduce((best, c) => (c[0] > best[0] ? c : best));
  return { delayMs, cause, politeness: { recentMs, backoff: 0, delayMs, cause } };
}
