import { exitCodeOf, formatSummary, isComplete, notFetched, summarize } from './crawl-summary';

const none = { hosts: 0, first: [] };

describe('the crawl summary', () => {
  const fetched = { fetched: 3, 'status.2xx': 3 };

  it('tells the endings apart by exit code: finished 0, nothing answered 3, budget or time limit 4, signals 130/143', () => {
    expect(exitCodeOf(summarize(fetched, 1))).toBe(0);
    expect(exitCodeOf(summarize({ fetched: 1, 'status.4xx': 1 }, 1))).toBe(3);
    expect(exitCodeOf(summarize(fetched, 1, 'budget'))).toBe(4);
    expect(exitCodeOf(summarize(fetched, 1, 'time-limit'))).toBe(4);
    expect(exitCodeOf(summarize(fetched, 1, 'byte-budget'))).toBe(4);
    expect(exitCodeOf({ ...summarize(fetched, 1, 'interrupted'), interrupted: 'SIGINT' })).toBe(130);
    expect(exitCodeOf({ ...summarize(fetched, 1, 'interrupted'), interrupted: 'SIGTERM' })).toBe(143);
  });

  it('is complete only when finished with nothing left in the frontier or the failed set, and some page answered', () => {
    expect(isComplete({ ...summarize(fetched, 1), left: 0 })).toBe(true);
    expect(isComplete({ ...summarize(fetched, 1), left: 9 })).toBe(false);
    expect(isComplete({ ...summarize(fetched, 1, 'budget'), left: 0 })).toBe(false);
    expect(isComplete({ ...summarize(fetched, 1), left: 0, failed: { parse: 1 } })).toBe(false);
    expect(isComplete({ ...summarize({ fetched: 1, 'status.5xx': 1 }, 1), left: 0 })).toBe(false);
  });

  it('names what the budget left first, with the URLs held for a retry', () => {
    const stopped = { reason: 'budget' as const, left: 218, held: 1, maxPages: 50, maxTimeMs: 0 };
    const [first] = notFetched({ refused: none, dnsFailed: none, setAside: [], stopped }, fetched);
    expect(first).toEqual({
      reason: 'budget',
      urls: 218,
      detail:
        '218 URLs left in the frontier (1 of them held for a retry or a recrawl) when the page budget was spent (--max-pages 50, FRONTIER_MAX_PAGES): raise it to fetch more.',
    });
    expect(notFetched({ refused: none, dnsFailed: none, setAside: [], stopped: { ...stopped, reason: 'finished' } }, fetched)).toEqual([]);
  });

  it('names the byte budget, and says so in the summary', () => {
    const stopped = { reason: 'byte-budget' as const, left: 3, held: 0, maxPages: 0, maxBytes: 25_000, maxTimeMs: 0 };
    expect(notFetched({ refused: none, dnsFailed: none, setAside: [], stopped }, fetched)[0]).toEqual({
      reason: 'byte-budget',
      urls: 3,
      detail: '3 URLs left in the frontier when the byte budget was spent (--max-bytes 25000, FRONTIER_MAX_BYTES): raise it to fetch more.',
    });
    expect(formatSummary({ ...summarize(fetched, 1, 'byte-budget'), left: 3 })).toMatch(/^Crawl stopped: byte budget spent in 1 s/);
  });
});
