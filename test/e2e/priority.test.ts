import { TestWeb } from '../web/test-web';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { QUICK_ROBOTS_GIVE_UP_ENV } from '../support/test-web-cluster';
import { crawlTestWeb, FOLLOW_EVERY_LINK, readFetchLog } from '../support/test-web-crawl';

afterAll(removeTempDirs);

/**
 * Under contention (one back queue: one host served at a time) and a near-strict front selector, the
 * default prioritizer's order is the fetch order: shallower pages are fetched before deeper ones.
 * Sitemaps are off: their URLs are ranked by the sitemap's own <priority>, not by depth.
 */
describe('priority under contention, as fetched', () => {
  it('fetches pages in non-decreasing depth', async () => {
    const web = await TestWeb.start({ hosts: 20, seed: 5 });
    try {
      const dir = tempDir('priority-');
      await crawlTestWeb(web, dir, {
        args: [...web.seeds(), ...FOLLOW_EVERY_LINK, '--sitemaps', 'off'],
        delaySeconds: 0,
        env: { ...QUICK_ROBOTS_GIVE_UP_ENV, FRONTIER_BACK_QUEUES: '1', FRONTIER_PRIORITY_BIAS: '1e12' },
      });
      const pages = readFetchLog(dir).filter((entry) => !entry.robots);
      expect(pages.length).toBe(web.expectedWithoutSitemaps().reachable.size);
      const depths = pages.map((p) => p.depth);
      expect(Math.max(...depths)).toBeGreaterThan(3);
      const inversions = depths.filter((d, i) => i > 0 && d < depths[i - 1]);
      expect(inversions).toEqual([]);
    } finally {
      await web.close();
    }
  }, 150_000);
});
