import { Registry } from 'prom-client';
import { loadConfig } from '@crawler/config';
import { CrawlUrl, QueueName, SCHEMA_VERSION, UrlBatch } from '@crawler/contracts';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { MemoryStateStore } from '@crawler/state';
import { UrlSeenProcessor } from './url-seen.processor';
import { UrlSeenService } from './url-seen.service';

async function setup() {
  const state = new MemoryStateStore();
  let handler!: (batch: UrlBatch) => Promise<void>;
  const sent: { queue: QueueName; payload: any }[] = [];
  const pipeline = {
    consume: async (_queue: QueueName, h: (batch: UrlBatch) => Promise<void>) => void (handler = h),
    send: async (queue: QueueName, payload: unknown) => void sent.push({ queue, payload }),
  } as unknown as Pipeline;
  const config = loadConfig({}, { 'seen.expectedUrls': 10_000 });
  const seen = new UrlSeenService(state, config);
  const processor = new UrlSeenProcessor(pipeline, seen, new CrawlStats(state, new Registry()), config);
  await processor.onApplicationBootstrap();
  return { handle: (batch: UrlBatch) => handler(batch), sent };
}

const url = (path: string): CrawlUrl => ({ url: `http://a.test${path}`, depth: 1, source: 'link', hops: 0 });
const batch = (...paths: string[]): UrlBatch => ({ v: SCHEMA_VERSION, urls: paths.map(url) });

describe('UrlSeenProcessor', () => {
  it('sends a redelivered batch its first answer again, under the same frontier batch id', async () => {
    const { handle, sent } = await setup();
    await handle(batch('/1', '/2', '/1'));
    await handle(batch('/1', '/2', '/1')); // the same message again, as after a crash before its ack
    expect(sent).toHaveLength(2);
    expect(sent[1].payload).toEqual(sent[0].payload);
    expect(sent[0].payload.urls.map((u: CrawlUrl) => u.url)).toEqual(['http://a.test/1', 'http://a.test/2']);
  });

  it('admits only the new URLs of another batch, and sends nothing when there are none', async () => {
    const { handle, sent } = await setup();
    await handle(batch('/1', '/2'));
    await handle(batch('/2', '/3'));
    await handle(batch('/3'));
    expect(sent.map((s) => s.payload.urls.map((u: CrawlUrl) => u.url))).toEqual([['http://a.test/1', 'http://a.test/2'], ['http://a.test/3']]);
    expect(new Set(sent.map((s) => s.payload.batchId)).size).toBe(2);
  });
});
