import pino from 'pino';
import { Registry } from 'prom-client';
import { loadConfig } from '@crawler/config';
import { FetchRequest, QueueName, SCHEMA_VERSION } from '@crawler/contracts';
import { DownloaderMembership } from '@crawler/hash-ring';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import Redis from 'ioredis';
import { MemoryStateStore, RedisStateStore, StateStore } from '@crawler/state';
import { DownloaderProcessor } from './downloader.processor';
import type { DownloaderService } from './downloader.service';

function setup(download: (request: FetchRequest) => Promise<unknown>, state: StateStore = new MemoryStateStore()) {
  let handler!: (request: FetchRequest) => Promise<void>;
  const sent: unknown[] = [];
  const pipeline = {
    consume: async (_queue: QueueName, h: typeof handler) => void (handler = h),
    send: async (_queue: QueueName, payload: unknown) => void sent.push(payload),
  } as unknown as Pipeline;
  const downloader = { download, resumes: () => false } as unknown as DownloaderService;
  const config = loadConfig({}, { 'downloader.id': 'd1' });
  const processor = new DownloaderProcessor(pipeline, downloader, config, state, pino({ enabled: false }), new CrawlStats(state, new Registry(), loadConfig({})));
  return { processor, deliver: (request: FetchRequest) => handler(request), sent, config, pipeline };
}

const request: FetchRequest = {
  v: SCHEMA_VERSION,
  leaseId: '42',
  fetchId: 'f1',
  url: 'http://a.test/',
  host: 'a.test',
  depth: 0,
  source: 'seed',
  hops: 0,
  ip: '127.0.0.1',
};

describe('DownloaderProcessor', () => {
  it('fetches once per lease, however often the fetch job is delivered', async () => {
    let downloads = 0;
    const { processor, deliver, sent } = setup(async () => ({ fetched: ++downloads }));
    await processor.onApplicationBootstrap();
    await Promise.all([deliver(request), deliver(request)]);
    await deliver(request);
    await deliver({ ...request, leaseId: '43' });
    expect(downloads).toBe(2);
    expect(sent).toEqual([{ fetched: 1 }, { fetched: 2 }]);
    await processor.onApplicationShutdown();
  });

  it('leaves the ring saying it drained when nothing is in flight, and without saying so while a fetch is', async () => {
    const state = new MemoryStateStore();
    const members = new DownloaderMembership(state.namespace('downloaders'));
    const idle = setup(async () => ({ fetched: 1 }), state);
    await idle.processor.onApplicationBootstrap();
    await idle.deliver(request);
    await idle.processor.onApplicationShutdown();
    expect((await members.view()).drained).toEqual(['d1']);

    let answer!: () => void;
    const busy = setup(() => new Promise((resolve) => (answer = () => resolve({ fetched: 1 }))), state);
    await busy.processor.onApplicationBootstrap();
    const delivery = busy.deliver({ ...request, leaseId: '43' });
    await busy.processor.onApplicationShutdown();
    expect(await members.view()).toEqual({ live: [], drained: [] });
    answer();
    await delivery;
  });

  it('gives the lease back when a delivery fails unexpectedly, so its retry fetches', async () => {
    let calls = 0;
    const { processor, deliver, sent } = setup(async () => {
      if (++calls === 1) throw new Error('content store down');
      return { fetched: calls };
    });
    await processor.onApplicationBootstrap();
    await expect(deliver(request)).rejects.toThrow('content store down');
    await deliver(request);
    expect(sent).toEqual([{ fetched: 2 }]);
    await processor.onApplicationShutdown();
  });

  it("sends a kept outcome on the retry when the frontier's queue was down: the page is not fetched again", async () => {
    let downloads = 0;
    const { processor, deliver, sent, pipeline } = setup(async () => ({ fetched: ++downloads }));
    const send = pipeline.send.bind(pipeline);
    let down = true;
    pipeline.send = async (queue, payload) => {
      if (down) throw new Error('CLUSTERDOWN The cluster is down');
      return send(queue, payload);
    };
    await processor.onApplicationBootstrap();
    await expect(deliver(request)).rejects.toThrow('CLUSTERDOWN');
    await expect(deliver(request)).rejects.toThrow('CLUSTERDOWN');
    down = false;
    await deliver(request);
    await deliver(request);
    expect(downloads).toBe(1);
    expect(sent).toEqual([{ fetched: 1 }]);
    await processor.onApplicationShutdown();
  });

  it('keeps a lease claim after its fetch only while a second delivery could still fetch, not the whole lease', async () => {
    const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
    const prefix = `t18m-leases-${process.pid}-${Math.random().toString(36).slice(2)}`;
    const state = new RedisStateStore({ url: REDIS_URL, prefix });
    const redis = new Redis(REDIS_URL);
    try {
      let downloads = 0;
      let ttlDuringFetch = 0;
      const { processor, deliver, config } = setup(async () => {
        ttlDuringFetch = await redis.pttl(`${prefix}:downloader-leases:42`);
        return { fetched: ++downloads };
      }, state);
      await processor.onApplicationBootstrap();
      const { leaseMs } = config.frontier;
      const { totalTimeoutMs } = config.downloader;
      await deliver({ ...request, leaseExpiresAt: Date.now() + leaseMs });
      const ttl = await redis.pttl(`${prefix}:downloader-leases:42`);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(leaseMs - totalTimeoutMs);
      // Written so from the start, while the page is fetched: one write a claim, not a claim and its shortening.
      expect(ttlDuringFetch).toBeGreaterThan(0);
      expect(ttlDuringFetch).toBeLessThanOrEqual(leaseMs - totalTimeoutMs);
      await deliver({ ...request, leaseExpiresAt: Date.now() + leaseMs }); // still refused meanwhile
      expect(downloads).toBe(1);
      // A lease that no fetch may start under any more: no claim is written.
      await deliver({ ...request, leaseId: '43', leaseExpiresAt: Date.now() + totalTimeoutMs - 1 });
      expect(await redis.exists(`${prefix}:downloader-leases:43`)).toBe(0);
      await processor.onApplicationShutdown();
    } finally {
      await state.clear();
      await state.close();
      await redis.quit();
    }
  });
});
