import { TestWeb } from '../web/test-web';
import { TestWebCluster } from '../support/test-web-cluster';

/**
 * Hub revisits in the distributed shape: URL-seen counts each page's new links in Redis in its own process,
 * the frontier reads them in its own, and the crawl comes back more often to the hubs of `hubs-0.test` than
 * to its clocks (pages that change on every request without adding links).
 */
describe('distributed crawl with the recrawl policy hubs', () => {
  let web: TestWeb;
  let cluster: TestWebCluster;
  let status: any;
  const visits = (prefix: string) => web.hubServes.filter((s) => s.path.startsWith(prefix)).length;

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 12, growingHubs: { hubs: 2, clocks: 8, linkEveryMs: 1000, initialItems: 2 } });
    cluster = await new TestWebCluster(web).start({
      env: {
        FRONTIER_RECRAWL: 'true',
        FRONTIER_RECRAWL_POLICY: 'hubs',
        FRONTIER_RECRAWL_INITIAL_MS: '2000',
        FRONTIER_RECRAWL_MIN_MS: '1000',
        FRONTIER_RECRAWL_MAX_MS: '32000',
        // The host is busy with items between visits, so a clock's doubling intervals set it apart from a hub
        // only over a long enough crawl: at 200 pages a hub got 1.4–1.7 times a clock's visits, at 300 2.4–2.6.
        FRONTIER_MAX_PAGES: '300',
        FRONTIER_MIN_DELAY_MS: '5',
      },
    });
    expect(await cluster.seed([`${web.origin('hubs-0.test')}/`])).toBe(201);
    status = await cluster.until((s) => s.complete, 120_000, 500);
    await cluster.stopServices();
  }, 200_000);

  afterAll(async () => {
    await cluster?.close();
    await web?.close();
  });

  it('decides hub or leaf from the new URLs counted in another process', () => {
    expect(status.complete).toBe(true);
    expect(status.totals['frontier.recrawl-hub']).toBeGreaterThan(0);
    expect(status.totals['frontier.recrawl-leaf']).toBeGreaterThan(0);
  });

  it('revisits a hub more often than a page that changes without adding links', () => {
    expect(visits('/hub/') / 2).toBeGreaterThan((visits('/clock/') / 8) * 1.5);
  });
});
