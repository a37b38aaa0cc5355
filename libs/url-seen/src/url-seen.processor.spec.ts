import { Registry } from 'prom-client';
import { loadConfig } from '@crawler/config';
import { CrawlUrl, QueueName, SCHEMA_VERSION, UrlBatch } from '@crawler/contracts';
import { HubLinks } from '@crawler/crawl-state';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { MemoryStateStore } from '@crawler/state';
import { UrlSeenProcessor } from './url-seen.processor';
import { UrlSeenService } from './url-seen.service';

async function setup(overrides: Record<string, unknown> = {}) {
  const state = new MemoryStateStore();
  let handler!: (batch: UrlBatch) => Promise<void>;
  const sent: { queue: QueueName; payload: any }[] = [];
  const pipeline = {
    consume: async (_queue: QueueName, h: (batch: UrlBatch) => Promise<void>) => void (handler = h),
    send: async (queue: QueueName, payload: unknown) => void sent.push({ queue, payload }),
  } as unknown as Pipeline;
  const config = loadConfig({}, { 'seen.expectedUrls': 10_000, ...overrides });
  const seen = new UrlSeenService(state, config);
  const hubLinks = new HubLinks(state, config);
  const stats = new CrawlStats(state, new Registry(), loadConfig({}));
  const processor = new UrlSeenProcessor(pipeline, seen, stats, config, hubLinks);
  await processor.onApplicationBootstrap();
  return { handle: (batch: UrlBatch) => handler(batch), sent, seen, state, hubLinks, stats };
}

const url = (path: string): CrawlUrl => ({ url: `http://a.test${path}`, depth: 1, source: 'link', hops: 0 });
const batch = (...paths: string[]): UrlBatch => ({ v: SCHEMA_VERSION, urls: paths.map(url) });

describe('UrlSeenProcessor', () => {
  it('sends a batch redelivered before its URLs were sent its first answer again, under the same frontier batch id', async () => {
    const { handle, sent, seen } = await setup();
    // The first delivery admitted the batch and kept its answer, then died before sending.
    const first = await seen.admitBatch(batch('/1', '/2', '/1').urls, 'b1');
    await handle({ ...batch('/1', '/2', '/1'), batchId: 'b1' }); // the same message again
    expect(sent).toHaveLength(1);
    expect(sent[0].payload).toEqual({ v: SCHEMA_VERSION, urls: first.fresh, batchId: 'b1' });
    expect(sent[0].payload.urls.map((u: CrawlUrl) => u.url)).toEqual(['http://a.test/1', 'http://a.test/2']);
  });

  it('forgets a batch once its URLs are sent: a later redelivery sends none twice and loses none', async () => {
    const { handle, sent, state } = await setup();
    await handle({ ...batch('/1', '/2'), batchId: 'b1' });
    await handle({ ...batch('/3'), batchId: 'b2' });
    await handle({ ...batch('/1'), batchId: 'b3' }); // nothing new: nothing sent, nothing kept either
    for (const id of ['b1', 'b2', 'b3']) expect(await state.namespace('url-seen').get(`answer:${id}`)).toBeNull();
    await handle({ ...batch('/1', '/2'), batchId: 'b1' }); // redelivered after its send, as after a crash before its ack
    expect(sent.map((s) => s.payload.urls.map((u: CrawlUrl) => u.url))).toEqual([['http://a.test/1', 'http://a.test/2'], ['http://a.test/3']]);
  });

  it('admits only the new URLs of another batch, and sends nothing when there are none', async () => {
    const { handle, sent } = await setup();
    await handle(batch('/1', '/2'));
    await handle(batch('/2', '/3'));
    await handle(batch('/3'));
    expect(sent.map((s) => s.payload.urls.map((u: CrawlUrl) => u.url))).toEqual([['http://a.test/1', 'http://a.test/2'], ['http://a.test/3']]);
    expect(new Set(sent.map((s) => s.payload.batchId)).size).toBe(2);
  });

  describe('with the recrawl policy hubs', () => {
    const from = (referrer: string, ...paths: string[]): UrlBatch => ({ v: SCHEMA_VERSION, urls: paths.map((p) => ({ ...url(p), referrer })) });

    it("adds each page's URLs never seen before to its count, repeats not", async () => {
      const { handle, hubLinks } = await setup({ 'frontier.recrawl': true, 'frontier.recrawlPolicy': 'hubs' });
      await handle(from('http://a.test/hub', '/1', '/2'));
      await handle(from('http://a.test/hub', '/1', '/2', '/3')); // the hub again: one link is new
      await handle(from('http://a.test/leaf', '/1', '/3')); // nothing new
      expect(await hubLinks.count('http://a.test/hub')).toBe(3);
      expect(await hubLinks.count('http://a.test/leaf')).toBe(0);
    });

    it('counts the new URLs of FRONTIER_RECRAWL_HUB_PAGES pages at most; a page past it is refused, counted', async () => {
      const { handle, hubLinks, stats } = await setup({ 'frontier.recrawl': true, 'frontier.recrawlPolicy': 'hubs', 'frontier.recrawlHubPages': 1 });
      await handle(from('http://a.test/hub', '/1'));
      await handle(from('http://a.test/other', '/2'));
      await handle(from('http://a.test/hub', '/3'));
      expect(await hubLinks.count('http://a.test/hub')).toBe(2);
      expect(await hubLinks.count('http://a.test/other')).toBe(0);
      expect((await stats.totals())['seen.hub-pages-refused']).toBe(1);
    });

    it('counts nothing under the default policy', async () => {
      const { handle, hubLinks } = await setup({ 'frontier.recrawl': true });
      await handle(from('http://a.test/hub', '/1', '/2'));
      expect(await hubLinks.count('http://a.test/hub')).toBe(0);
    });
  });
});
