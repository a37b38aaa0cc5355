import { TestWeb } from '../web/test-web';
import { TestWebCluster } from '../support/test-web-cluster';

/**
 * The render plugin in the distributed shape: its own OS process (`plugin-render`, from its own app, with a
 * real Chromium) consuming its own queue on the real Redis, every core service its own process too, all told
 * only `PLUGINS=render`; the crawl seeded with the test web's script-built host alone.
 */
describe('distributed crawl with the render plugin as its own service', () => {
  /** Long enough that a sub-request sent without waiting for the downloader's turn (or it for the render's) shows. */
  const DELAY_MS = 1000;
  let web: TestWeb;
  let cluster: TestWebCluster;
  let status: any;
  let handledBy: Record<string, Record<string, number>>;
  let exitCodes: (number | null)[];

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 12, scripted: true });
    cluster = await new TestWebCluster(web).start({
      env: { FRONTIER_MIN_DELAY_MS: String(DELAY_MS), PLUGINS: 'render' },
      extra: ['plugin-render'],
    });
    expect(await cluster.seed([web.expected.scripted[0]])).toBe(201);
    ({ status, handledBy, exitCodes } = await cluster.completeAndStop(120_000));
  }, 200_000);

  afterAll(async () => {
    await cluster?.close();
    await web?.close();
  });

  it('finds every page the script-built home page links to once rendered', () => {
    expect(status.complete).toBe(true);
    const paths = new Set(web.requests.filter((r) => r.host === 'app-0.test').map((r) => r.path));
    for (const url of web.expected.scripted) expect(paths).toContain(new URL(url).pathname);
    // One robots.txt for the host: the plugin's process reads the downloader's copy from the shared cache.
    expect(web.requests.filter((r) => r.host === 'app-0.test' && r.path === '/robots.txt')).toHaveLength(1);
    expect(status.totals['plugin.render.rendered']).toBe(1);
    expect(status.totals['plugin.render.refused.address']).toBe(1);
    expect(Object.keys(status.totals).filter((k) => k.startsWith('failed.'))).toEqual([]);
  });

  it("keeps one schedule for the host across the downloader's and the render process's requests (the frontier's store in Redis)", () => {
    expect(web.maxConcurrentByHost().get('app-0.test')).toBe(1);
    expect(web.minGapAfterResponseByHost().get('app-0.test')).toBeGreaterThanOrEqual(DELAY_MS - 20);
  });

  it('runs the plugin in its own process: only plugin-render handles plugin.render, every page of the host', () => {
    expect(handledBy['plugin-render']['plugin.render']).toBe(web.expected.scripted.length);
    expect(Object.entries(handledBy).filter(([name, queues]) => name !== 'plugin-render' && queues['plugin.render'])).toEqual([]);
    expect(exitCodes.every((code) => code === 0)).toBe(true);
  });
});
