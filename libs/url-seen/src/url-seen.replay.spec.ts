import pino from 'pino';
import { Registry } from 'prom-client';
import { Redis } from 'ioredis';
import { loadConfig } from '@crawler/config';
import { CrawlUrl, QueueName, SCHEMA_VERSION, UrlBatch } from '@crawler/contracts';
import { HubLinks } from '@crawler/crawl-state';
import { BullmqQueueTransport, QueueTransport } from '@crawler/queue';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { RedisStateStore } from '@crawler/state';
import { UrlSeenProcessor } from './url-seen.processor';
import { UrlSeenService } from './url-seen.service';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const HOUR_MS = 3_600_000;

/**
 * A seen-urls message marks its URLs seen, then fails to hand them to the frontier until its attempts run out:
 * it waits in the failed set for an operator to fix the cause and replay it (docs/operations.md), which can
 * be an hour later. The replay must still send the URLs: they are marked seen, and only the kept answer says
 * they were new. Real Redis, real BullMQ queues, the real processor; the fault is the frontier-add send
 * refused while `frontierDown`, and the hour is passed on the keys' clocks (each time to live cut by an hour).
 */
describe('UrlSeenProcessor: a batch whose URLs could not be sent, replayed from the failed set an hour later', () => {
  const prefix = `t-seen-replay-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const redis = new Redis(REDIS_URL);
  let transport: BullmqQueueTransport;
  let state: RedisStateStore;

  afterAll(async () => {
    await transport?.close();
    await state?.close();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
    await redis.quit();
  });

  it('sends the URLs it marked seen: none lost', async () => {
    transport = new BullmqQueueTransport({ connection: REDIS_URL, prefix, attempts: 2, backoffMs: 10 });
    state = new RedisStateStore({ url: REDIS_URL, prefix });
    let frontierDown = true;
    // The transport as the processor sees it, its sends to the frontier refused while `frontierDown`.
    const refusing: Pick<QueueTransport, 'add' | 'consume'> = {
      add: (queue, payload, options) =>
        queue === QueueName.FrontierAdd && frontierDown
          ? Promise.reject(new Error('frontier-add refused (the fault under test)'))
          : transport.add(queue, payload, options),
      consume: (queue, handler, options) => transport.consume(queue, handler, options),
    };
    const config = loadConfig({}, { 'seen.expectedUrls': 10_000 });
    const registry = new Registry();
    const stats = new CrawlStats(state, registry, config);
    const pipeline = new Pipeline(refusing as QueueTransport, stats, registry, pino({ level: 'silent' }), config);
    const processor = new UrlSeenProcessor(pipeline, new UrlSeenService(state, config), stats, config, new HubLinks(state, config));
    await processor.onApplicationBootstrap();
    const received: string[] = [];
    await transport.consume(QueueName.FrontierAdd, async (batch) => void received.push(...batch.urls.map((u) => u.url)));

    const urls: CrawlUrl[] = ['/a', '/b'].map((path) => ({ url: `http://site.test${path}`, depth: 1, source: 'link', hops: 0 }));
    await transport.add(QueueName.SeenUrls, { v: SCHEMA_VERSION, urls, batchId: 'page-1' } satisfies UrlBatch);
    await until(async () => (await transport.counts(QueueName.SeenUrls)).failed === 1);

    await passTime(redis, prefix, HOUR_MS);
    frontierDown = false;
    expect(await transport.replayFailed(QueueName.SeenUrls)).toBe(1);
    await until(() => idle(transport));
    expect(received.sort()).toEqual(['http://site.test/a', 'http://site.test/b']);
  }, 30_000);
});

/** `ms` passes for every key under `prefix` that expires: its time to live is cut by that much (gone when spent). */
async function passTime(redis: Redis, prefix: string, ms: number): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const ttl = await redis.pttl(key);
      if (ttl < 0) continue;
      if (ttl <= ms) await redis.del(key);
      else await redis.pexpire(key, ttl - ms);
    }
  } while (cursor !== '0');
}

async function idle(transport: BullmqQueueTransport): Promise<boolean> {
  const counts = await Promise.all([QueueName.SeenUrls, QueueName.FrontierAdd].map((q) => transport.counts(q)));
  return counts.every((c) => c.waiting + c.active + c.delayed === 0);
}

async function until(done: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}
