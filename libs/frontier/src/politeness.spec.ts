import type { FetchOutcome } from '@crawler/contracts';
import { politeDelay } from './politeness';

const outcome = (over: Partial<FetchOutcome>): FetchOutcome => ({
  v: 1,
  fetchId: 'x',
  url: 'http://a.test/',
  host: 'a.test',
  kind: 'fetched',
  requested: true,
  durationMs: 10,
  ...over,
});

describe('politeDelay', () => {
  const settings = { minDelayMs: 1000, delayMultiplier: 10 };

  it('rests at least the configured floor', () => {
    expect(politeDelay(outcome({}), settings)).toEqual({ delayMs: 1000, cause: 'floor' });
  });

  it('obeys a longer robots.txt Crawl-delay', () => {
    expect(politeDelay(outcome({ crawlDelayMs: 5000 }), settings)).toEqual({ delayMs: 5000, cause: 'robots' });
  });

  it('slows down for a slow host', () => {
    expect(politeDelay(outcome({ durationMs: 300 }), settings)).toEqual({ delayMs: 3000, cause: 'latency' });
  });

  it('owes nothing when no request was sent', () => {
    expect(politeDelay(outcome({ kind: 'disallowed', requested: false }), settings)).toEqual({ delayMs: 0, cause: 'none' });
  });
});
