import { fetchQueue, JobOf, pluginQueue, QueueName } from '@crawler/contracts';
import { createRedis, mastersOf, scanKeys, slotOf, unlinkKeys, type RedisClient } from '@crawler/redis';
import { bullmqKeyPrefix } from './bullmq-keys';
import { BullmqQueueTransport } from './bullmq-queue.driver';

// The local cluster `scripts/redis-cluster.sh start` runs (as test/support/redis-cluster.ts).
const REDIS_CLUSTER_URL = process.env.REDIS_CLUSTER_URL || 'redis+cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002';

describe('bullmq on a Redis Cluster: where the keys land', () => {
  const prefix = `t17q-keys-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const downloaders = Array.from({ length: 16 }, (_, i) => fetchQueue(`downloader-${i}`));
  const queues = [QueueName.FrontierAdd, QueueName.FrontierDone, QueueName.DnsResolve, QueueName.Parse, QueueName.FilterUrls, pluginQueue('png'), ...downloaders];
  let admin: RedisClient;
  let transport: BullmqQueueTransport;

  beforeAll(async () => {
    admin = createRedis(REDIS_CLUSTER_URL);
    transport = new BullmqQueueTransport({ connection: REDIS_CLUSTER_URL, prefix, attempts: 1 });
    const token: JobOf<QueueName.FrontierAdd> = { v: 1, urls: [{ url: 'http://a.test/', depth: 0, source: 'seed', hops: 0 }] };
    // Every queue gets a waiting job and a delayed one; one also a failed job, so that a worker's keys exist too.
    for (const queue of queues) {
      await transport.add(queue, token as never);
      await transport.add(queue, token as never, { delayMs: 60_000 });
    }
    await transport.consume(QueueName.FrontierAdd, async () => {
      throw new Error('kept for the failed set');
    });
    for (let i = 0; i < 500 && (await transport.counts(QueueName.FrontierAdd)).failed === 0; i++) await new Promise((r) => setTimeout(r, 10));
  });

  afterAll(async () => {
    await transport.close();
    for await (const keys of scanKeys(admin, `${prefix}:*`)) await unlinkKeys(admin, keys);
    await admin.quit();
  });

  /** The keys under the prefix, by the queue their hash tag names. */
  async function keysByQueue(client: RedisClient): Promise<Map<string, string[]>> {
    const byQueue = new Map<string, string[]>();
    for await (const keys of scanKeys(client, `${prefix}:*`)) {
      for (const key of keys) {
        const queue = /^\{([^}]+)\}:/.exec(key.slice(prefix.length + 1))?.[1] ?? `(no tag: ${key})`;
        byQueue.set(queue, [...(byQueue.get(queue) ?? []), key]);
      }
    }
    return byQueue;
  }

  it('keeps every key of a queue in the one slot of its name, found by SCAN <prefix>:*', async () => {
    const byQueue = await keysByQueue(admin);
    expect([...byQueue.keys()].sort()).toEqual([...queues].sort());
    for (const [queue, keys] of byQueue) {
      const slots = new Set(keys.map(slotOf));
      expect({ queue, slots: [...slots] }).toEqual({ queue, slots: [slotOf(bullmqKeyPrefix(prefix, queue as QueueName))] });
    }
    // The delayed job, the failed one (the waiting one it was), the worker's stall check: all in that one slot.
    expect(byQueue.get(QueueName.FrontierAdd)!.map((k) => k.slice(bullmqKeyPrefix(prefix, QueueName.FrontierAdd).length))).toEqual(
      expect.arrayContaining(['delayed', 'failed', 'stalled-check', 'meta', 'events', 'id']),
    );
  });

  it('refuses a prefix holding a hash tag, which would put every queue in its slot', () => {
    expect(() => new BullmqQueueTransport({ connection: REDIS_CLUSTER_URL, prefix: '{crawl}' })).toThrow(/no braces/);
  });

  it('puts different queues in different slots, spread over every master (the downloaders’ queues alone too)', async () => {
    const slots = new Set(queues.map((queue) => slotOf(bullmqKeyPrefix(prefix, queue))));
    expect(slots.size).toBe(queues.length);
    const masterOf = new Map<string, number>();
    const masters = mastersOf(admin);
    for (const [i, master] of masters.entries()) {
      for (const queue of (await keysByQueue(master)).keys()) masterOf.set(queue, i);
    }
    expect(masters.length).toBeGreaterThanOrEqual(3);
    expect(new Set(masterOf.values()).size).toBe(masters.length);
    expect(new Set(downloaders.map((queue) => masterOf.get(queue))).size).toBe(masters.length);
  });
});
