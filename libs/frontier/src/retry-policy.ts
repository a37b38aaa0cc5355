import type { FetchErrorKind, FetchOutcome } from '@crawler/contracts';
import { isSlowDown } from './politeness';

/**
 * What a fetch's failure means for its URL:
 * - `transient`: it may pass (an overloaded or restarting server, a dropped connection): tried again later;
 * - `permanent`: another try would get the same (a bad certificate, a body that cannot be decoded): given up;
 * - `slow-down`: a 429/503, whose retry is the host's backoff (politeness.ts), not the URL's.
 * `reason` names it for counts and the failed-URL record: `status-500`, `reset`, `timeout-total`…
 */
export type FailureClass = { kind: 'transient' | 'permanent' | 'slow-down'; reason: string };

/** Failures with no answer that may pass. DNS is not among them: the resolver vetted the address first. */
const TRANSIENT_ERRORS: ReadonlySet<FetchErrorKind> = new Set([
  'timeout-connect',
  'timeout-headers',
  'timeout-body',
  'timeout-total',
  'timeout-rate',
  'refused',
  'reset',
  'protocol',
  // The proxy would not open the tunnel (its 502 for a site down, its 503, a 407 until the credentials are fixed).
  'proxy',
]);

/**
 * The failure of a turn, or undefined when the turn was no failure (an answer below 400, a turn that sent no
 * request, a robots.txt turn). Answers of 4xx are the site's final word and are `permanent` (408 Request
 * Timeout excepted); 501 Not Implemented and 505 HTTP Version Not Supported will not change either.
 * An error without a kind (an older downloader) is treated as permanent: nothing is retried on a guess.
 */
export function classifyFailure(outcome: FetchOutcome): FailureClass | undefined {
  if (!outcome.requested) return undefined;
  if (outcome.kind === 'error') {
    const kind = outcome.errorKind ?? 'other';
    return { kind: TRANSIENT_ERRORS.has(kind) ? 'transient' : 'permanent', reason: kind };
  }
  if (outcome.kind !== 'fetched' || outcome.status === undefined || outcome.status < 400) return undefined;
  const status = outcome.status;
  const reason = `status-${status}`;
  if (isSlowDown(status)) return { kind: 'slow-down', reason };
  if (status === 408 || (status >= 500 && status !== 501 && status !== 505)) return { kind: 'transient', reason };
  return { kind: 'permanent', reason };
}

export interface RetrySettings {
  /** Requests in all (FRONTIER_TRANSIENT_ATTEMPTS). */
  transientAttempts: number;
  /** Wait before the first retry (FRONTIER_RETRY_BACKOFF_MS). */
  retryBackoffMs: number;
  /** Ceiling of any wait (FRONTIER_MAX_BACKOFF_MS). */
  maxBackoffMs: number;
}

/** ±25 %: retries of URLs that failed together (a server restarting) do not all come back at one instant. */
const RETRY_JITTER = 0.25;

/**
 * How long after its `failures`-th transient failure (1 = the first) a URL is tried again: the base wait
 * doubled per failure, jittered by `random` (in [0, 1)), never beyond the ceiling; a Retry-After that asks
 * for longer is obeyed, within the ceiling too. Undefined when the attempts are spent.
 */
export function retryDelayMs(failures: number, settings: RetrySettings, random: number, retryAfterMs = 0): number | undefined {
  if (failures >= settings.transientAttempts) return undefined;
  const base = settings.retryBackoffMs * 2 ** (failures - 1);
  const jittered = Math.round(base * (1 + RETRY_JITTER * (2 * random - 1)));
  return Math.min(settings.maxBackoffMs, Math.max(jittered, retryAfterMs));
}
