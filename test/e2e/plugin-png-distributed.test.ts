import { createHash } from 'node:crypto';
import { MinioContentStore } from '@crawler/content-store';
import { collectKeys } from '@crawler/content-store/testing';
import { TestWeb } from '../web/test-web';
import { expectPoliteCompleteCrawl } from './crawl-expectations';
import { TestWebCluster } from '../support/test-web-cluster';

const DELAY_MS = 100;

/**
 * The PNG plugin in the distributed shape: its own OS process (`plugin-png`, from its own app) consuming its
 * own queue on the real Redis, every core service its own process too, all told only `PLUGINS=png`.
 */
describe('distributed crawl with the PNG plugin as its own service', () => {
  let web: TestWeb;
  let cluster: TestWebCluster;
  let status: any;
  let handledBy: Record<string, Record<string, number>>;
  let exitCodes: (number | null)[];

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 12 });
    cluster = await new TestWebCluster(web).start({ env: { FRONTIER_MIN_DELAY_MS: String(DELAY_MS), PLUGINS: 'png' }, extra: ['plugin-png'] });
    expect(await cluster.seed(web.seeds())).toBe(201);
    ({ status, handledBy, exitCodes } = await cluster.completeAndStop(120_000));
  }, 200_000);

  afterAll(async () => {
    await cluster?.close();
    await web?.close();
  });

  it('completes, having fetched the pages and the allowed PNGs, politely', () => {
    expect(status.complete).toBe(true);
    const expected = web.expectedWithPlugins(['png']);
    expect(status.totals.fetched).toBe(expected.reachable.size);
    expectPoliteCompleteCrawl(web, { delayMs: DELAY_MS, expected });
    expect(Object.keys(status.totals).filter((k) => k.startsWith('failed.'))).toEqual([]);
  });

  it('runs the plugin in its own process: only plugin-png handles plugin.png', () => {
    const images = web.images().filter((i) => !i.url.includes('/private/'));
    expect(handledBy['plugin-png']['plugin.png']).toBe(images.length);
    expect(Object.entries(handledBy).filter(([name, queues]) => name !== 'plugin-png' && queues['plugin.png'])).toEqual([]);
    expect(status.totals['processed.plugin.png']).toBe(images.length);
    expect(exitCodes.every((code) => code === 0)).toBe(true);
  });

  it('stores the distinct valid PNGs in S3 with their dimensions, and rejects the corrupt ones with their reasons', async () => {
    const valid = web.images().filter((i) => !i.url.includes('/private/') && !('corrupt' in i.png));
    const distinct = new Map(valid.map((i) => [createHash('sha256').update(i.body).digest('hex'), i]));
    const store = await MinioContentStore.connect({ url: cluster.s3Url, bucket: cluster.prefix });
    const keys = await collectKeys(store.list('images/'));
    expect(keys.sort()).toEqual([...distinct.keys()].map((h) => `images/${h.slice(0, 2)}/${h}.png`).sort());
    for (const [hash, image] of distinct) {
      const { meta } = (await store.get(`images/${hash.slice(0, 2)}/${hash}.png`))!;
      const png = image.png as { width: number; height: number };
      expect([meta.width, meta.height]).toEqual([String(png.width), String(png.height)]);
    }
    expect(status.totals).toMatchObject({
      'plugin.png.stored': distinct.size,
      'plugin.png.duplicate': 1,
      'plugin.png.rejected.bad-ihdr-crc': 1,
      'plugin.png.rejected.truncated': 1,
    });
    expect(await collectKeys(store.list('staging/'))).toEqual([]);
  });
});
