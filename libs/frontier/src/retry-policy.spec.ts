import type { FetchOutcome } from '@crawler/contracts';
import { classifyFailure, retryDelayMs } from './retry-policy';

const base = { v: 1, leaseId: 'l', fetchId: 'f', url: 'http://a.test/', host: 'a.test', requested: true, durationMs: 5 } as const;
const answered = (status: number) => classifyFailure({ ...base, kind: 'fetched', status } as FetchOutcome);
const failed = (errorKind?: FetchOutcome['errorKind']) => classifyFailure({ ...base, kind: 'error', error: 'x', errorKind } as FetchOutcome);

describe('classifyFailure', () => {
  it('retries what may pass: 5xx but 501/505, 408, timeouts, resets, refused connections, protocol errors', () => {
    for (const status of [500, 502, 504, 520, 599, 408]) expect(answered(status)).toEqual({ kind: 'transient', reason: `status-${status}` });
    for (const kind of ['timeout-connect', 'timeout-headers', 'timeout-body', 'timeout-total', 'reset', 'refused', 'protocol', 'proxy'] as const) {
      expect(failed(kind)).toEqual({ kind: 'transient', reason: kind });
    }
  });

  it('does not retry what will not change: other 4xx, 501, 505, TLS, decoding, oversized headers, unknown errors', () => {
    for (const status of [400, 401, 403, 404, 410, 451, 501, 505]) expect(answered(status)).toEqual({ kind: 'permanent', reason: `status-${status}` });
    for (const kind of ['tls', 'decode', 'too-large-headers', 'unvetted', 'dns', 'other'] as const) expect(failed(kind)).toEqual({ kind: 'permanent', reason: kind });
    expect(failed(undefined)).toEqual({ kind: 'permanent', reason: 'other' });
  });

  it('leaves 429 and 503 to the host’s backoff, and sees no failure in answers below 400 or turns that sent nothing', () => {
    expect(answered(429)).toEqual({ kind: 'slow-down', reason: 'status-429' });
    expect(answered(503)).toEqual({ kind: 'slow-down', reason: 'status-503' });
    for (const status of [200, 204, 301, 304, 399]) expect(answered(status)).toBeUndefined();
    expect(classifyFailure({ ...base, kind: 'error', requested: false, error: 'no vetted address' } as FetchOutcome)).toBeUndefined();
    expect(classifyFailure({ ...base, kind: 'robots-fetched', status: 500 } as FetchOutcome)).toBeUndefined();
  });
});

describe('retryDelayMs', () => {
  const settings = { transientAttempts: 3, retryBackoffMs: 30_000, maxBackoffMs: 3_600_000 };

  it('doubles per failure, and answers nothing once the attempts are spent', () => {
    expect(retryDelayMs(1, settings, 0.5)).toBe(30_000);
    expect(retryDelayMs(2, settings, 0.5)).toBe(60_000);
    expect(retryDelayMs(3, settings, 0.5)).toBeUndefined();
    expect(retryDelayMs(1, { ...settings, transientAttempts: 1 }, 0.5)).toBeUndefined();
  });

  it('jitters by ±25 %', () => {
    expect(retryDelayMs(1, settings, 0)).toBe(22_500);
    expect(retryDelayMs(1, settings, 0.999_999)).toBe(37_500);
    expect(retryDelayMs(2, settings, 0)).toBe(45_000);
  });

  it('stays under FRONTIER_MAX_BACKOFF_MS, and obeys a longer Retry-After within it', () => {
    const many = { ...settings, transientAttempts: 20 };
    expect(retryDelayMs(15, many, 0.999)).toBe(3_600_000);
    expect(retryDelayMs(1, settings, 0.5, 120_000)).toBe(120_000);
    expect(retryDelayMs(1, settings, 0.5, 10_000)).toBe(30_000);
    expect(retryDelayMs(1, settings, 0.5, 86_400_000)).toBe(3_600_000);
  });
});
