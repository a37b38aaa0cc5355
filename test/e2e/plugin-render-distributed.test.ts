import { TestWeb } from '../web/test-web';
import { TestWebCluster } from '../support/test-web-cluster';

/**
 * The render plugin in the distributed shape: its own OS process (`plugin-render`, from its own app, with a
 * real Chromium) consuming its own queue on the real Redis, every core service its own process too, all told
 * only `PLUGINS=render`; the crawl seeded with the test web's script-built host alone.
 */
describe('distributed crawl with the render plugin as its own service', () => {
  let web: TestWeb;
  let cluster: TestWebCluster;
  let status: any;
  let handledBy: Record<string, Record<string, number>>;
  let exitCodes: (number | null)[];

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 12, scripted: true });
    cluster = await new TestWebCluster(web).start({
      env: { FRONTIER_MIN_DELAY_MS: '100', PLUGINS: 'render' },
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

  it('runs the plugin in its own process: only plugin-render handles plugin.render, every page of the host', () => {
    expect(handledBy['plugin-render']['plugin.render']).toBe(web.expected.scripted.length);
    expect(Object.entries(handledBy).filter(([name, queues]) => name !== 'plugin-render' && queues['plugin.render'])).toEqual([]);
    expect(exitCodes.every((code) => code === 0)).toBe(true);
  });
});
