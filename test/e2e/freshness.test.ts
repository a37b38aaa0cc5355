import { TestWeb } from '../web/test-web';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { crawlTestWeb } from '../support/test-web-crawl';

afterAll(removeTempDirs);

/**
 * Freshness, judged by the test web: with --recrawl, pages come back on an interval that shrinks while they
 * change and grows while they do not; refetches are conditional, 304 counts as unchanged, and a page whose
 * Expires lies in the future is not refetched before it.
 */
describe('freshness: adaptive recrawl with conditional requests', () => {
  let web: TestWeb;
  let host: string;
  let summary: Record<string, any>;
  const requestsTo = (path: string) => web.requests.filter((r) => r.host === host && r.path === path);

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 12, freshness: true });
    [host] = web.roles.fresh;
    const dir = tempDir('freshness-');
    summary = await crawlTestWeb(web, dir, {
      args: [...web.extraSeeds(), '--recrawl', '--max-pages', '40'],
      delaySeconds: 0.05,
      env: { FRONTIER_RECRAWL_INITIAL_MS: '400', FRONTIER_RECRAWL_MIN_MS: '200', FRONTIER_RECRAWL_MAX_MS: '3200' },
    });
  }, 150_000);

  afterAll(() => web?.close());

  it('stops at the page budget', () => {
    expect(summary).toMatchObject({ stopped: 'budget', complete: false });
    expect(summary.pagesFetched).toBeGreaterThanOrEqual(40);
  });

  it('refetches an unchanged page conditionally, gets 304, and waits longer each time', () => {
    const visits = requestsTo('/static');
    expect(visits.length).toBeGreaterThanOrEqual(3);
    expect(visits.slice(1).every((r) => r.conditional && r.status === 304)).toBe(true);
    const gaps = visits.slice(1).map((r, i) => r.at - visits[i].at);
    // The interval doubles from FRONTIER_RECRAWL_INITIAL_MS up to the maximum, and a visit never comes before
    // its interval is over. How late it comes depends on the machine's load (a fifth of a second seen on a
    // busy one), so the gaps are held to their intervals from below, and to growing, not to a ratio.
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(Math.min(3200, 400 * 2 ** i) - 10));
    for (let i = 1; i < gaps.length; i++) expect(gaps[i]).toBeGreaterThan(gaps[i - 1]);
  });

  it('comes back sooner and more often to a page that changes every time', () => {
    const news = requestsTo('/news');
    expect(news.length).toBeGreaterThan(requestsTo('/static').length * 2);
    expect(news.every((r) => r.status === 200)).toBe(true);
    const gaps = news.slice(1).map((r, i) => r.at - news[i].at);
    expect(Math.max(...gaps.slice(-3))).toBeLessThan(800); // at the 200 ms floor (plus politeness), not growing
  });

  it('does not refetch a page before its Expires', () => {
    expect(requestsTo('/expires')).toHaveLength(1);
  });

  it('does not store or mine an unchanged page again', () => {
    expect(summary.totals['revisit.unchanged']).toBeGreaterThan(0);
    expect(summary.pagesStored).toBeLessThan(summary.pagesFetched);
  });
});
