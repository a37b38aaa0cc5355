import { runSoak, SoakResult, soakFailures } from '../support/soak';

/**
 * The soak (bench/soak.ts, 100 k pages) reduced to a test: a distributed crawl of ~1,750 URLs over
 * 100 hosts, sampled at 10%, 50% and 100%, with the soak's checks under loose bounds. Politeness delay 0
 * (one request per host at a time still holds, and robots.txt's Crawl-delay: 1 on one host). The records
 * are in PostgreSQL when a server answers (see soakRecords), as at scale.
 */
const HOSTS = 100;
const PAGES_PER_HOST = 15;

describe('soak, reduced (distributed shape)', () => {
  let result: SoakResult;

  beforeAll(async () => {
    result = await runSoak({ hosts: HOSTS, pagesPerHost: PAGES_PER_HOST, delayMs: 0, crawlDelayHosts: 1, timeoutMs: 150_000 });
    console.log(
      `soak-reduced: ${result.fetched} pages in ${result.seconds.toFixed(0)} s; ` +
        `RSS MiB by sample ${JSON.stringify(result.samples.map((s) => Object.values(s.rssBytes).map((b) => Math.round(b / 2 ** 20))))}; ` +
        `Redis (records in ${result.records}) ${result.redis.bytesPerPage.toFixed(0)} B/page, ${result.redis.expiringBytesPerPage.toFixed(0)} of it expiring, ` +
        `${result.redis.marginalBytesPerPage.toFixed(0)} B/page from 50% to 100% in keys that do not expire (${result.redis.marginalAllBytesPerPage.toFixed(0)} with them; budget ${result.redis.budgetPerPage}); max depths ${JSON.stringify(result.maxDepths)}`,
    );
  }, 210_000);

  it('completes: every reachable URL fetched once, nothing unexpected, no unexpected errors', () => {
    expect(result.complete).toBe(true);
    // A host set aside (backed off for timeouts, or its robots.txt given up, on a machine too loaded to answer
    // in time) leaves its URLs unfetched in a crawl that is still complete: named here before the URLs themselves.
    expect(result.setAside).toEqual([]);
    // Then: a URL never requested comes with where it was lost (see explainLost), which a failure here prints.
    expect(result.lost).toEqual([]);
    expect(result.fetched).toBe(result.expectedUrls);
    expect(result.failures).toEqual({});
    expect(result.politeness).toMatchObject({ notOnce: 0, disallowedFetched: 0, unexpected: 0 });
  });

  it('stays polite: robots.txt first, one request per host at a time, Crawl-delay kept', () => {
    expect(result.politeness).toMatchObject({ robotsNotFirst: 0, tooClose: 0, maxConcurrentPerHost: 1 });
    expect(result.politeness.minCrawlDelayIntervalMs).toBeGreaterThanOrEqual(1000);
  });

  it('samples at 10%, 50% and 100%, every process alive at each', () => {
    expect(result.samples.map((s) => s.percent)).toEqual([10, 50, 100]);
    for (const s of result.samples) expect(Object.values(s.rssBytes).every((b) => b > 0)).toBe(true);
  });

  it('keeps memory flat, Redis within budget and every queue bounded and drained (loose bounds)', () => {
    // Loose: a short run is mostly warm-up, so RSS may grow by half plus 100 MiB from 50% to 100%. Redis may
    // take 4× its budget per page: with 15 pages a host, what every host costs (its last FRONTIER_AUDIT_LENGTH
    // audit entries, its frontier record) weighs 7× what it does at 100 pages a host, and the dashboard's
    // recent-activity ring (≈ 0.1 MiB) is spread over few pages.
    expect(soakFailures(result, { rssGrowth: 1.5, rssSlackBytes: 100 * 2 ** 20, budgetFactor: 4 })).toEqual([]);
  });

  it('keeps no per-page record in Redis when they live in PostgreSQL: Redis does not grow with the pages', () => {
    if (result.records !== 'postgres') return; // no PostgreSQL here: the records are Redis's by design
    expect(result.redis.perPageRecordClasses).toEqual([]);
    // The keys that do not expire: flat from 50% to 100%. The simhash index alone, put back in Redis, adds ≈ 360 B a page.
    expect(result.redis.marginalBytesPerPage).toBeLessThan(2 * result.redis.budgetPerPage);
  });
});
