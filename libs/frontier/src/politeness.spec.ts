import type { FetchErrorKind, FetchOutcome } from '@crawler/contracts';
import { politeDelay } from './politeness';

const outcome = (over: Partial<FetchOutcome>): FetchOutcome => ({
  v: 1,
  leaseId: '1',
  fetchId: 'x',
  url: 'http://a.test/',
  host: 'a.test',
  kind: 'fetched',
  requested: true,
  durationMs: 10,
  ...over,
});

describe('politeDelay', () => {
  const settings = { minDelayMs: 1000, delayMultiplier: 10, recentResponses: 3, maxBackoffMs: 60_000 };

  it('rests at least the configured floor, or the operator’s override', () => {
    expect(politeDelay(outcome({}), undefined, settings)).toMatchObject({ delayMs: 1000, cause: 'floor' });
    expect(politeDelay(outcome({}), undefined, settings, 4000)).toMatchObject({ delayMs: 4000, cause: 'override' });
  });

  it('keeps the floor under an override below it, unless FRONTIER_ALLOW_DELAY_BELOW_MIN allows it', () => {
    const fast = outcome({ durationMs: 1 });
    expect(politeDelay(fast, undefined, settings, 0)).toMatchObject({ delayMs: 1000, cause: 'floor' });
    expect(politeDelay(outcome({ status: 429 }), undefined, settings, 0)).toMatchObject({ delayMs: 1000, cause: 'backoff' });
    expect(politeDelay(fast, undefined, { ...settings, allowDelayBelowMin: true }, 0)).toMatchObject({ delayMs: 10, cause: 'latency' });
    expect(politeDelay(fast, undefined, { ...settings, delayMultiplier: 0, allowDelayBelowMin: true }, 50)).toMatchObject({ delayMs: 50, cause: 'override' });
  });

  it("puts a site's delay between the floor and the operator's override (docs/frontier.md, precedence)", () => {
    const quick = outcome({ durationMs: 1 });
    // The site's delay raises the floor; the operator's override of the host wins over it, either way.
    expect(politeDelay(quick, undefined, settings, null, 3000)).toMatchObject({ delayMs: 3000, cause: 'site' });
    expect(politeDelay(quick, undefined, settings, 1500, 3000)).toMatchObject({ delayMs: 1500, cause: 'override' });
    expect(politeDelay(quick, undefined, settings, 6000, 3000)).toMatchObject({ delayMs: 6000, cause: 'override' });
    // Under the floor it is held to the floor, unless FRONTIER_ALLOW_DELAY_BELOW_MIN allows it.
    expect(politeDelay(quick, undefined, settings, null, 200)).toMatchObject({ delayMs: 1000, cause: 'site' });
    expect(politeDelay(quick, undefined, { ...settings, delayMultiplier: 0, allowDelayBelowMin: true }, null, 200)).toMatchObject({ delayMs: 200, cause: 'site' });
    // Crawl-delay and slow answers lengthen it; a 429 backs off from it.
    expect(politeDelay(outcome({ crawlDelayMs: 5000, durationMs: 1 }), undefined, settings, null, 3000)).toMatchObject({ delayMs: 5000, cause: 'robots' });
    expect(politeDelay(outcome({ durationMs: 500 }), undefined, settings, null, 3000)).toMatchObject({ delayMs: 5000, cause: 'latency' });
    expect(politeDelay(outcome({ status: 429, durationMs: 1 }), undefined, settings, null, 3000)).toMatchObject({ delayMs: 3000, cause: 'site' });
    expect(politeDelay(outcome({ kind: 'error', errorKind: 'reset', durationMs: 1 }), undefined, settings, null, 3000)).toMatchObject({ delayMs: 3000, cause: 'site' });
  });

  it('obeys a longer robots.txt Crawl-delay', () => {
    expect(politeDelay(outcome({ crawlDelayMs: 5000 }), undefined, settings)).toMatchObject({ delayMs: 5000, cause: 'robots' });
  });

  it('slows down by the mean of the last few response times', () => {
    const previous = { recentMs: [100, 500, 900], backoff: 0, delayMs: 0, cause: 'floor' };
    const decision = politeDelay(outcome({ durationMs: 200 }), previous, settings);
    expect(decision.politeness.recentMs).toEqual([500, 900, 200]);
    expect(decision).toMatchObject({ delayMs: Math.round((10 * 1600) / 3), cause: 'latency' });
  });

  it('backs off exponentially on 429 and 503, honouring a longer Retry-After', () => {
    let previous;
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      const d = politeDelay(outcome({ status: i % 2 ? 503 : 429 }), previous, settings);
      delays.push(d.delayMs);
      previous = d.politeness;
    }
    expect(delays).toEqual([1000, 2000, 4000, 8000]);
    expect(politeDelay(outcome({ status: 429, retryAfterMs: 30_000 }), undefined, settings)).toMatchObject({ delayMs: 30_000, cause: 'retry-after' });
    expect(politeDelay(outcome({ status: 429, retryAfterMs: 10 ** 9 }), undefined, settings).delayMs).toBe(60_000);
    expect(politeDelay(outcome({ status: 200 }), previous, settings).politeness.backoff).toBe(0);
    expect(politeDelay(outcome({ status: 429 }), undefined, settings, 600_000)).toMatchObject({ delayMs: 600_000, cause: 'override' });
    expect(politeDelay(outcome({ status: 503, crawlDelayMs: 20_000 }), undefined, settings)).toMatchObject({ delayMs: 20_000, cause: 'robots' });
  });

  it('owes nothing when no request was sent', () => {
    expect(politeDelay(outcome({ kind: 'disallowed', requested: false }), undefined, settings)).toMatchObject({ delayMs: 0, cause: 'none' });
  });

  it('keys the adaptive delay to responses: a timeout’s time does not feed it', () => {
    const previous = { recentMs: [200], backoff: 0, delayMs: 2000, cause: 'latency' };
    const timedOut = politeDelay(outcome({ kind: 'error', errorKind: 'timeout-total', durationMs: 60_000 }), previous, settings);
    expect(timedOut).toMatchObject({ delayMs: 2000, cause: 'latency' });
    expect(timedOut.politeness.recentMs).toEqual([200]);
    const reset = politeDelay(outcome({ kind: 'error', errorKind: 'reset', durationMs: 5000 }), previous, settings);
    expect(reset.politeness.recentMs).toEqual([200]);
    // A response, however slow, is the host's own pace.
    expect(politeDelay(outcome({ durationMs: 3000 }), previous, settings).politeness.recentMs).toEqual([200, 3000]);
  });

  describe('the strike rule (FRONTIER_HOST_TIMEOUT_STRIKES)', () => {
    const strikes = { ...settings, maxBackoffMs: 300_000, hostTimeoutStrikes: 3, hostTimeoutBackoffMs: 60_000 };
    const timeout = (errorKind: FetchErrorKind = 'timeout-rate') => outcome({ kind: 'error', errorKind, durationMs: 10_000 });

    it('backs a host off after N timeouts in a row, doubling per further timeout up to the ceiling', () => {
      let previous;
      const decisions: [number, string, number | undefined][] = [];
      for (const kind of ['timeout-rate', 'timeout-total', 'timeout-headers', 'timeout-body', 'timeout-connect', 'timeout-rate', 'timeout-rate'] as const) {
        const d = politeDelay(timeout(kind), previous, strikes);
        decisions.push([d.delayMs, d.cause, d.politeness.timeouts]);
        previous = d.politeness;
      }
      expect(decisions).toEqual([
        [1000, 'floor', 1],
        [1000, 'floor', 2],
        [60_000, 'timeouts', 3],
        [120_000, 'timeouts', 4],
        [240_000, 'timeouts', 5],
        [300_000, 'timeouts', 6],
        [300_000, 'timeouts', 7],
      ]);
    });

    it('a response resets the count; other failures and turns without a request leave it as it is', () => {
      let previous = politeDelay(timeout(), politeDelay(timeout(), undefined, strikes).politeness, strikes).politeness;
      expect(previous.timeouts).toBe(2);
      previous = politeDelay(outcome({ kind: 'error', errorKind: 'reset' }), previous, strikes).politeness;
      previous = politeDelay(outcome({ kind: 'disallowed', requested: false }), previous, strikes).politeness;
      expect(previous.timeouts).toBe(2);
      expect(politeDelay(timeout(), previous, strikes)).toMatchObject({ delayMs: 60_000, cause: 'timeouts' });
      const answered = politeDelay(outcome({ status: 500 }), previous, strikes);
      expect(answered.politeness.timeouts).toBeUndefined();
      expect(politeDelay(timeout(), answered.politeness, strikes)).toMatchObject({ delayMs: 1000, cause: 'floor' });
    });

    it('counts URLs, not requests: a URL timing out again on its retry is no further strike', () => {
      const retried = (failures: number) =>
        outcome({ kind: 'error', errorKind: 'timeout-rate', durationMs: 10_000, retry: { url: 'http://a.test/drip', depth: 1, source: 'link', hops: 0, failures } });
      let previous = politeDelay(timeout(), undefined, strikes).politeness;
      for (const failures of [1, 2, 1, 2]) previous = politeDelay(retried(failures), previous, strikes).politeness;
      expect(previous).toMatchObject({ timeouts: 1, cause: 'floor' });
      expect(politeDelay(timeout(), previous, strikes).politeness.timeouts).toBe(2);
    });

    it('never rests less than the usual delay, and is off at 0', () => {
      const previous = { recentMs: [], backoff: 0, timeouts: 2, delayMs: 0, cause: 'floor' };
      expect(politeDelay({ ...timeout(), crawlDelayMs: 90_000 }, previous, strikes)).toMatchObject({ delayMs: 90_000, cause: 'robots' });
      expect(politeDelay(timeout(), previous, { ...strikes, hostTimeoutStrikes: 0 })).toMatchObject({ delayMs: 1000, cause: 'floor' });
    });
  });
});
