import type { FetchOutcome } from '@crawler/contracts';
import type { HostPoliteness } from '@crawler/frontier-store';

export interface PolitenessSettings {
  minDelayMs: number;
  delayMultiplier: number;
  recentResponses: number;
  maxBackoffMs: number;
  /** An operator's override may go under minDelayMs (FRONTIER_ALLOW_DELAY_BELOW_MIN); otherwise the floor holds. */
  allowDelayBelowMin?: boolean;
  /** Timeouts of distinct URLs in a row that back a host off (FRONTIER_HOST_TIMEOUT_STRIKES); 0 or absent = never. */
  hostTimeoutStrikes?: number;
  /** The first such back-off, doubled per further timeout up to maxBackoffMs (FRONTIER_HOST_TIMEOUT_BACKOFF_MS). */
  hostTimeoutBackoffMs?: number;
}

export type DelayCause = 'none' | 'floor' | 'site' | 'override' | 'robots' | 'latency' | 'retry-after' | 'backoff' | 'timeouts';

export interface DelayDecision {
  delayMs: number;
  cause: DelayCause;
  politeness: HostPoliteness;
}

/** A 429 or a 503 asks us to slow down: back off, however the request otherwise went. */
export const isSlowDown = (status?: number) => status === 429 || status === 503;

/** A request that got no full response in time: no connection, no headers, a silent or too slow body. */
const isTimeout = (outcome: Pick<FetchOutcome, 'kind' | 'errorKind'>) => outcome.kind === 'error' && !!outcome.errorKind?.startsWith('timeout-');

/**
 * A timeout that counts towards the host's strikes: the URL's first failure. Its retries say nothing new of
 * the host (one slow page times out every time), so a URL that keeps failing fails alone.
 */
export const isStrike = (outcome: Pick<FetchOutcome, 'kind' | 'errorKind' | 'retry'>) => isTimeout(outcome) && !outcome.retry?.failures;

/**
 * How long a host rests after a turn, and why:
 * - a turn that sent no request (robots disallowed it, the name did not resolve) owes nothing;
 * - after a 429/503: the larger of Retry-After and an exponential backoff (floor × 2^n, capped);
 * - otherwise: max(robots Crawl-delay, floor — or the operator's override — , multiplier × the mean of
 *   the last few response times).
 * Only responses feed "the last few response times": a failed request's time is that of a timeout (up to
 * the total timeout), not of the host's pages, and would make the host rest half a minute between pages it
 * serves quickly. Timeouts are counted instead, one per URL (isStrike); at hostTimeoutStrikes in a row the
 * host rests hostTimeoutBackoffMs, doubled for each further one (cause `timeouts`), until a response resets
 * the count.
 * The floor of the host's rest is the first of: the operator's override (`PATCH /hosts/:host`), the site's
 * `minDelayMs` (the most specific site pattern that sets one), FRONTIER_MIN_DELAY_MS (cause `override`,
 * `site`, `floor`). Robots.txt's Crawl-delay and slow answers lengthen the rest past any of them; nothing
 * shortens Crawl-delay. An override or a site's delay may raise the floor freely, but lowers it only where
 * FRONTIER_ALLOW_DELAY_BELOW_MIN allows: one set before that rule (or written to the store by hand) cannot
 * remove the floor (an override under it is ignored, a site's delay under it held to it).
 */
export function politeDelay(
  outcome: FetchOutcome,
  previous: HostPoliteness | undefined,
  settings: PolitenessSettings,
  requestedOverrideMs?: number | null,
  siteMinDelayMs?: number,
): DelayDecision {
  const overrideMs = requestedOverrideMs == null || settings.allowDelayBelowMin || requestedOverrideMs >= settings.minDelayMs ? requestedOverrideMs : null;
  const floor: [number, DelayCause] =
    overrideMs != null
      ? [overrideMs, 'override']
      : siteMinDelayMs !== undefined
        ? [settings.allowDelayBelowMin ? siteMinDelayMs : Math.max(siteMinDelayMs, settings.minDelayMs), 'site']
        : [settings.minDelayMs, 'floor'];
  const recentMs = [...(previous?.recentMs ?? [])];
  const timeouts = previous?.timeouts ?? 0;
  if (!outcome.requested) {
    return { delayMs: 0, cause: 'none', politeness: { recentMs, backoff: previous?.backoff ?? 0, ...(timeouts ? { timeouts } : {}), delayMs: 0, cause: 'none' } };
  }
  if (outcome.kind === 'error') return afterFailure(outcome, previous, settings, floor);
  recentMs.push(outcome.durationMs);
  recentMs.splice(0, Math.max(0, recentMs.length - settings.recentResponses));
  if (isSlowDown(outcome.status)) {
    const backoff = (previous?.backoff ?? 0) + 1;
    const exponential = Math.min(settings.maxBackoffMs, Math.max(settings.minDelayMs, 1000) * 2 ** (backoff - 1));
    const retryAfter = Math.min(settings.maxBackoffMs, outcome.retryAfterMs ?? 0);
    // Never less than the host's usual rest: the operator's override and Crawl-delay still hold.
    const usual = Math.max(floor[0], outcome.crawlDelayMs ?? 0);
    const [delayMs, cause]: [number, DelayCause] =
      retryAfter >= exponential && retryAfter >= usual
        ? [retryAfter, 'retry-after']
        : exponential >= usual
          ? [exponential, 'backoff']
          : [usual, floor[1] !== 'floor' ? floor[1] : 'robots'];
    return { delayMs, cause, politeness: { recentMs, backoff, delayMs, cause } };
  }
  const [delayMs, cause] = usualDelay(outcome, recentMs, settings, floor);
  return { delayMs, cause, politeness: { recentMs, backoff: 0, delayMs, cause } };
}

/** The rest after a request that got no response: the usual one, or the strike rule's back-off after a timeout. */
function afterFailure(outcome: FetchOutcome, previous: HostPoliteness | undefined, settings: PolitenessSettings, floor: [number, DelayCause]): DelayDecision {
  const recentMs = [...(previous?.recentMs ?? [])];
  const backoff = previous?.backoff ?? 0;
  // Other failures (a reset, a refused connection, a retry timing out again) neither count as a strike nor forgive one.
  const strike = isStrike(outcome);
  const timeouts = (previous?.timeouts ?? 0) + (strike ? 1 : 0);
  const usual = usualDelay(outcome, recentMs, settings, floor);
  const strikes = settings.hostTimeoutStrikes ?? 0;
  if (strikes > 0 && strike && timeouts >= strikes) {
    const backedOff = Math.min(settings.maxBackoffMs, (settings.hostTimeoutBackoffMs ?? 60_000) * 2 ** Math.min(30, timeouts - strikes));
    const [delayMs, cause]: [number, DelayCause] = backedOff >= usual[0] ? [backedOff, 'timeouts'] : usual;
    return { delayMs, cause, politeness: { recentMs, backoff, timeouts, delayMs, cause } };
  }
  const [delayMs, cause] = usual;
  return { delayMs, cause, politeness: { recentMs, backoff, ...(timeouts ? { timeouts } : {}), delayMs, cause } };
}

function usualDelay(outcome: FetchOutcome, recentMs: number[], settings: PolitenessSettings, floor: [number, DelayCause]): [number, DelayCause] {
  const mean = recentMs.length ? recentMs.reduce((a, b) => a + b, 0) / recentMs.length : 0;
  const candidates: [number, DelayCause][] = [floor, [outcome.crawlDelayMs ?? 0, 'robots'], [Math.round(settings.delayMultiplier * mean), 'latency']];
  return candidates.reduce((best, c) => (c[0] > best[0] ? c : best));
}
