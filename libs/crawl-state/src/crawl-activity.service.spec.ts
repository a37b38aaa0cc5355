import { FetchOutcome, SCHEMA_VERSION } from '@crawler/contracts';
import { MemoryStateStore } from '@crawler/state';
import { CrawlActivity } from './crawl-activity.service';

const outcome = (over: Partial<FetchOutcome>): FetchOutcome => ({
  v: SCHEMA_VERSION,
  leaseId: 'l',
  fetchId: 'f',
  url: 'http://a.test/x',
  host: 'a.test',
  kind: 'fetched',
  requested: true,
  status: 200,
  durationMs: 5,
  ...over,
});

describe('CrawlActivity', () => {
  it('keeps HTTP errors, fetch errors and unreachable robots.txt as recent errors, newest first, but not a missing sitemap', async () => {
    const activity = new CrawlActivity(new MemoryStateStore());
    await activity.recordOutcome(outcome({ url: 'http://a.test/missing', status: 404 }));
    await activity.recordOutcome(
      outcome({ url: 'http://a.test/sitemap.xml', status: 404, retry: { url: 'http://a.test/sitemap.xml', kind: 'sitemap', depth: 0, source: 'sitemap', hops: 0 } }),
    );
    await activity.recordOutcome(outcome({ url: 'http://a.test/ok' }));
    await activity.recordOutcome(outcome({ url: 'http://a.test/slow', kind: 'error', error: 'timeout' }));
    await activity.recordOutcome(outcome({ url: 'http://b.test/', host: 'b.test', kind: 'deferred', status: 503 }));
    expect((await activity.recentErrors()).map((e) => [e.kind, e.url])).toEqual([
      ['robots', 'http://b.test/'],
      ['fetch', 'http://a.test/slow'],
      ['http', 'http://a.test/missing'],
    ]);
    expect(await activity.topHosts()).toEqual([
      { host: 'a.test', requests: 4 },
      { host: 'b.test', requests: 1 },
    ]);
  });

  it("tells a name that failed to resolve from an unreachable robots.txt by the outcome's cause, and an older outcome by its text", async () => {
    const activity = new CrawlActivity(new MemoryStateStore());
    await activity.recordOutcome(outcome({ url: 'http://c.test/', host: 'c.test', kind: 'deferred', cause: 'dns', error: 'the server timed out' }));
    await activity.recordOutcome(outcome({ url: 'http://d.test/', host: 'd.test', kind: 'deferred', cause: 'robots', status: 503, error: 'DNS-like wording' }));
    await activity.recordOutcome(outcome({ url: 'http://e.test/', host: 'e.test', kind: 'deferred', error: 'DNS lookup of e.test failed: ETIMEOUT' }));
    expect((await activity.recentErrors()).map((e) => [e.kind, e.url, e.error])).toEqual([
      ['address', 'http://e.test/', 'DNS lookup of e.test failed: ETIMEOUT: site deferred'],
      ['robots', 'http://d.test/', 'robots.txt unreachable (DNS-like wording): site deferred'],
      ['address', 'http://c.test/', 'the server timed out: site deferred'],
    ]);
  });
});
