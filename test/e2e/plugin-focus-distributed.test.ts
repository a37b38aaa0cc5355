import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { RedisStateStore } from '@crawler/state';
import { PlantedWeb, TOPIC_TERMS } from '../web/planted-web';
import { REDIS_URL } from '../support/redis-prefix';
import { TestWebCluster } from '../support/test-web-cluster';

const run = promisify(execFile);

/**
 * The focused crawl in the distributed shape: the page hook in its own process (`plugin-focus`), the
 * prioritizer in the frontier's, both told only `PLUGINS=focus` and the topic, meeting in Redis. With a
 * frontier capacity (and few back queues, so that URLs wait in the front queues), the Redis frontier prunes.
 */
describe('distributed crawl with the focus plugin', () => {
  let web: PlantedWeb;
  let cluster: TestWebCluster;
  let status: any;
  let learned: Record<string, string>;
  let exitCodes: (number | null)[];

  beforeAll(async () => {
    web = await PlantedWeb.start({ hosts: 80, pagesPerHost: 15, clusters: 2, clusterSize: 4, seedHosts: 4, seed: 1 });
    cluster = await new TestWebCluster(web).start({
      env: {
        PLUGINS: 'focus',
        PLUGIN_FOCUS_TERMS: TOPIC_TERMS.join(','),
        FRONTIER_MAX_PAGES: '200',
        FRONTIER_MIN_DELAY_MS: '0',
        FRONTIER_BACK_QUEUES: '4',
        FRONTIER_MAX_QUEUED: '50',
      },
      extra: ['plugin-focus'],
    });
    expect(await cluster.seed(web.seeds())).toBe(201);
    status = await cluster.until((s) => s.complete, 120_000, 500);
    // The page hook's queue may still be draining when the crawl's budget is spent.
    status = await cluster.until((s) => s.totals['plugin.focus.judged'] === s.totals.stored, 30_000, 500);
    const state = new RedisStateStore({ url: REDIS_URL, prefix: cluster.prefix });
    learned = await state.namespace('plugin-focus').hashGetAll('learner');
    await state.close();
    exitCodes = await cluster.stopServices();
  }, 200_000);

  afterAll(async () => {
    await cluster?.close();
    await web?.close();
  });

  it('judges every stored page in the plugin’s process and keeps what it learned in Redis', () => {
    expect(status.complete).toBe(true);
    expect(status.totals['plugin.focus.judged']).toBe(status.totals.stored);
    expect(Object.keys(learned).length).toBeGreaterThan(10);
    expect(exitCodes.every((code) => code === 0)).toBe(true);
  });

  it('bounds the frontier: the lowest-priority URLs are pruned, counted', () => {
    expect(status.totals['frontier.pruned']).toBeGreaterThan(0);
  });

  it('loads the prioritizer in the frontier service: without a topic the frontier refuses to start, naming the setting', async () => {
    const main = join(__dirname, '../../dist/apps/frontier/src/main.js');
    const failed = await run(process.execPath, [main], {
      env: { ...process.env, ...cluster.env, PORT: '0', PLUGINS: 'focus', PLUGIN_FOCUS_TERMS: '' },
      timeout: 30_000,
    }).then(
      () => undefined,
      (error: { code?: number; stdout: string; stderr: string }) => error,
    );
    expect(failed?.code).not.toBe(0);
    expect(`${failed?.stdout}${failed?.stderr}`).toMatch(/PLUGIN_FOCUS_TERMS/);
  });
});
