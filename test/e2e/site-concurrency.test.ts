import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestWeb } from '../web/test-web';
import { runCrawlCli } from '../support/run-crawl-cli';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { ASK_ONCE_ENV, ONE_ADDRESS_ENV } from '../support/test-web-cluster';

/** Long enough that requests let out together overlap at the server, whatever the machine's load. */
const ANSWER_MS = 300;

/**
 * A site's `concurrency` as the server saw it: two slow hosts on one address (home page and three pages
 * each), `slow-0.test` given 3 requests in flight by the settings file, `slow-1.test` left to the crawl's
 * FRONTIER_PER_HOST_LIMIT (1). The per-IP interval is off (both hosts are on 127.0.0.1); the per-IP limit, 8,
 * leaves room for both.
 */
describe('the embedded crawl with a site given its own concurrency', () => {
  let web: TestWeb;
  let summary: Record<string, any>;

  beforeAll(async () => {
    web = await TestWeb.start({ slowHosts: [{ delayMs: ANSWER_MS }, { delayMs: ANSWER_MS }] });
    const dir = tempDir('site-concurrency-');
    writeFileSync(join(dir, 'hosts'), web.hostsFile());
    writeFileSync(join(dir, 'sites.yaml'), 'sites:\n  slow-0.test:\n    concurrency: 3\n');
    const { code, stdout, stderr } = await runCrawlCli(
      [
        ...web.extraSeeds(),
        '--site-settings',
        join(dir, 'sites.yaml'),
        '--delay',
        '0',
        '--hosts-file',
        join(dir, 'hosts'),
        '--allow-private',
        '--sitemaps',
        'off',
        '--out',
        dir,
        '--json',
      ],
      { env: { ...process.env, REDIS_URL: '', S3_URL: '', ...ONE_ADDRESS_ENV, ...ASK_ONCE_ENV }, timeoutMs: 90_000 },
    );
    expect({ code, stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    summary = JSON.parse(stdout);
  }, 120_000);

  afterAll(async () => {
    await web?.close();
    removeTempDirs();
  });

  it('fetches every page of both hosts', () => {
    expect(summary.complete).toBe(true);
    for (const host of web.roles.slow) {
      const ok = web.requests.filter((r) => r.host === host && r.status === 200 && r.path !== '/robots.txt').map((r) => r.path);
      expect(ok.sort()).toEqual(['/', '/p/1', '/p/2', '/p/3']);
    }
  });

  it('lets the site with concurrency 3 have 3 requests in flight at once, never more, and the other 1', () => {
    const [three, one] = web.roles.slow;
    expect(web.maxConcurrentByHost().get(three)).toBe(3);
    expect(web.maxConcurrentByHost().get(one)).toBe(1);
  });
});
