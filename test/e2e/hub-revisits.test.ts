import { TestWeb } from '../web/test-web';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { crawlTestWeb } from '../support/test-web-crawl';

afterAll(removeTempDirs);

/**
 * Hub revisits, judged by the test web: with FRONTIER_RECRAWL_POLICY=hubs the embedded crawl comes back more
 * often to the hubs of `hubs-0.test` (pages that gain a link every half second) than to its clocks (pages
 * that change on every request without adding a link), which the default policy revisits as often as hubs.
 */
describe('hub revisits: the recrawl policy hubs', () => {
  let web: TestWeb;
  let summary: Record<string, any>;
  const visits = (prefix: string) => web.hubServes.filter((s) => s.path.startsWith(prefix)).length;

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 12, growingHubs: { hubs: 2, clocks: 8, linkEveryMs: 500, initialItems: 2 } });
    const dir = tempDir('hub-revisits-');
    summary = await crawlTestWeb(web, dir, {
      args: [`${web.origin('hubs-0.test')}/`, '--recrawl', '--max-pages', '200'],
      delaySeconds: 0.005,
      env: { FRONTIER_RECRAWL_POLICY: 'hubs', FRONTIER_RECRAWL_INITIAL_MS: '1000', FRONTIER_RECRAWL_MIN_MS: '250', FRONTIER_RECRAWL_MAX_MS: '16000' },
    });
  }, 150_000);

  afterAll(() => web?.close());

  it('decides hub or leaf from the new URLs each page yielded', () => {
    expect(summary.totals['frontier.recrawl-hub']).toBeGreaterThan(0);
    expect(summary.totals['frontier.recrawl-leaf']).toBeGreaterThan(0);
  });

  it('revisits a hub more often than a page that changes without adding links', () => {
    const perHub = visits('/hub/') / 2;
    const perClock = visits('/clock/') / 8;
    expect(perHub).toBeGreaterThan(perClock * 1.5);
  });
});
