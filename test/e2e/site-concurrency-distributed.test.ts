import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestWeb } from '../web/test-web';
import { DOWNLOADER_APART } from '../support/service-processes';
import { TestWebCluster } from '../support/test-web-cluster';
import { removeTempDirs, tempDir } from '../support/temp-dirs';

/** Long enough that requests let out together overlap at the server, whatever the machine's load. */
const ANSWER_MS = 300;

/**
 * A site's `concurrency` in the distributed shape, as the server saw it: the frontier (its store in Redis)
 * holding each host to its own limit, the downloader (a process of its own) sending them at once. Three slow
 * hosts on one address: `slow-0.test` given 3 in flight by SITE_SETTINGS_FILE, `slow-1.test` left to the
 * crawl's 1, `slow-2.test` given 2 live through the control plane before the crawl starts.
 */
describe('distributed crawl with sites given their own concurrency', () => {
  let web: TestWeb;
  let cluster: TestWebCluster;
  let status: any;

  beforeAll(async () => {
    web = await TestWeb.start({ slowHosts: [{ delayMs: ANSWER_MS }, { delayMs: ANSWER_MS }, { delayMs: ANSWER_MS }] });
    const file = join(tempDir('site-concurrency-distributed-'), 'sites.yaml');
    writeFileSync(file, 'sites:\n  slow-0.test:\n    concurrency: 3\n');
    cluster = await new TestWebCluster(web).start({
      env: { FRONTIER_MIN_DELAY_MS: '0', SITEMAP_MODE: 'off', SITE_SETTINGS_FILE: file },
      services: DOWNLOADER_APART,
      startTimeoutMs: 90_000,
    });
    const put = await fetch(`${cluster.control}/sites/slow-2.test`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ concurrency: 2 }),
    });
    expect(put.status).toBe(200);
    // Past SITE_SETTINGS_REFRESH_MS (1 s): the frontier has read the live rule before the host's first URL arrives.
    await new Promise((r) => setTimeout(r, 1500));
    expect(await cluster.seed(web.extraSeeds())).toBe(201);
    status = await cluster.until((s) => s.complete, 120_000, 500);
  }, 200_000);

  afterAll(async () => {
    await cluster?.close();
    await web?.close();
    removeTempDirs();
  });

  it('fetches every page of every host', () => {
    expect(status.complete).toBe(true);
    for (const host of web.roles.slow) {
      const ok = web.requests.filter((r) => r.host === host && r.status === 200 && r.path !== '/robots.txt').map((r) => r.path);
      expect(ok.sort()).toEqual(['/', '/p/1', '/p/2', '/p/3']);
    }
  });

  it('holds each host to its own limit at the server: 3 from the file, 1 by default, 2 set live', () => {
    const inFlight = web.maxConcurrentByHost();
    expect(web.roles.slow.map((host) => inFlight.get(host))).toEqual([3, 1, 2]);
  });
});
