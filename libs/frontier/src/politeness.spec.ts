import type { FetchOutcome } from '@crawler/contracts';
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
});
