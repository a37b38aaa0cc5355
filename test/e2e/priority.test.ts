import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { TestWeb } from '../web/test-web';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { ASK_ONCE_ENV, ONE_ADDRESS_ENV, ROBOTS_ERROR_TTL_MS, ROBOTS_UNREACHABLE_MAX_MS } from '../support/test-web-cluster';

const run = promisify(execFile);
const CLI = join(__dirname, '../../dist/apps/crawl/src/main.js');

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
      writeFileSync(join(dir, 'hosts'), web.hostsFile());
      await run(
        process.execPath,
        [
          CLI,
          ...web.seeds(),
          '--scope',
          'any',
          '--max-depth',
          '1000',
          '--delay',
          '0',
          '--sitemaps',
          'off',
          '--hosts-file',
          join(dir, 'hosts'),
          '--allow-private',
          '--out',
          dir,
          '--json',
        ],
        {
          env: {
            ...process.env,
            REDIS_URL: '',
            S3_URL: '',
            ...ONE_ADDRESS_ENV,
            ...ASK_ONCE_ENV,
            DOWNLOADER_ROBOTS_ERROR_TTL_MS: ROBOTS_ERROR_TTL_MS,
            DOWNLOADER_ROBOTS_UNREACHABLE_MAX_MS: ROBOTS_UNREACHABLE_MAX_MS,
            FRONTIER_BACK_QUEUES: '1',
            FRONTIER_PRIORITY_BIAS: '1e12',
          },
          timeout: 120_000,
        },
      );
      const pages = readFileSync(join(dir, 'fetch-log.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line))
        .filter((entry) => !entry.robots);
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
