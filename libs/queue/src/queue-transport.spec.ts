import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { QueueName } from '@crawler/contracts';
import { BullmqQueueTransport } from './bullmq-queue.driver';
import { MemoryQueueTransport } from './memory-queue.driver';
import { queueTransportContract } from './queue-transport.contract';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
// Small attempts and backoff keep the retry tests in milliseconds.
const retries = { attempts: 2, backoffMs: 20 };

queueTransportContract('memory', async () => new MemoryQueueTransport(retries));

describe('bullmq', () => {
  let prefix = '';
  queueTransportContract(
    'bullmq',
    async () => {
      prefix = `test-${process.pid}-${Math.random().toString(36).slice(2)}`;
      return new BullmqQueueTransport({ connection: REDIS_URL, prefix, ...retries });
    },
    () => deleteKeys(`${prefix}:*`),
  );
});

async function deleteKeys(pattern: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    await redis.quit();
  }
}

describe('memory transport with maxWaiting', () => {
  const seed = (host: string) => ({ v: 1 as const, urls: [{ url: `http://${host}/`, depth: 0, source: 'seed' as const, hops: 0 }] });

  it('holds a producer while the queue it sends to is full, and never on the frontier’s own queues', async () => {
    const transport = new MemoryQueueTransport({ maxWaiting: 2 });
    try {
      await transport.add(QueueName.FilterUrls, seed('a.test'));
      await transport.add(QueueName.FilterUrls, seed('b.test'));
      let third = false;
      const sending = transport.add(QueueName.FilterUrls, seed('c.test')).then(() => (third = true));
      for (let i = 0; i < 5; i++) await transport.add(QueueName.FrontierAdd, seed(`f${i}.test`));
      await new Promise((r) => setTimeout(r, 20));
      expect(third).toBe(false);
      const handled: string[] = [];
      await transport.consume(QueueName.FilterUrls, async (p) => void handled.push(new URL(p.urls[0].url).hostname));
      await sending;
      while (handled.length < 3) await new Promise((r) => setTimeout(r, 5));
      expect(handled).toEqual(['a.test', 'b.test', 'c.test']);
      expect((await transport.counts(QueueName.FrontierAdd)).waiting).toBe(5);
    } finally {
      await transport.close();
    }
  });
});

describe('bullmq envelopes', () => {
  const prefix = `test-env-${process.pid}-${Math.random().toString(36).slice(2)}`;
  let transport: BullmqQueueTransport;
  beforeEach(() => {
    transport = new BullmqQueueTransport({ connection: REDIS_URL, prefix, attempts: 3, backoffMs: 20, batchLingerMs: 20 });
  });
  afterEach(async () => {
    await transport.close();
    await deleteKeys(`${prefix}:*`);
  });
  const token = (host: string) => ({ v: 1 as const, urls: [{ url: `http://${host}/`, depth: 0, source: 'seed' as const, hops: 0 }] });

  it('sends messages sent together as one job, and retries only the messages that failed', async () => {
    await Promise.all(Array.from({ length: 20 }, (_, i) => transport.add(QueueName.FrontierAdd, token(`h${i}.test`))));
    expect((await transport.counts(QueueName.FrontierAdd)).waiting).toBe(1);
    const calls = new Map<string, number>();
    await transport.consume(
      QueueName.FrontierAdd,
      async (p) => {
        const host = new URL(p.urls[0].url).hostname;
        calls.set(host, (calls.get(host) ?? 0) + 1);
        if ((host === 'h3.test' || host === 'h7.test') && calls.get(host) === 1) throw new Error('transient');
      },
      { concurrency: 4 },
    );
    await until(async () => [...calls.values()].reduce((a, b) => a + b, 0) === 22 && (await transport.counts(QueueName.FrontierAdd)).delayed === 0);
    expect(calls.size).toBe(20);
    expect([...calls].filter(([, n]) => n > 1).map(([h]) => h).sort()).toEqual(['h3.test', 'h7.test']);
  });

  it('keeps in the failed set a job of only the messages whose attempts ran out, with the reasons', async () => {
    await Promise.all(['ok.test', 'bad.test'].map((h) => transport.add(QueueName.FrontierAdd, token(h))));
    let bad = 0;
    await transport.consume(QueueName.FrontierAdd, async (p) => {
      if (p.urls[0].url.includes('bad')) {
        bad++;
        throw new Error('still broken');
      }
    });
    await until(async () => (await transport.counts(QueueName.FrontierAdd)).failed === 1);
    expect(bad).toBe(3);
    const redis = new Redis(REDIS_URL);
    const [id] = await redis.zrange(`${prefix}:${QueueName.FrontierAdd}:failed`, 0, -1);
    const data = JSON.parse((await redis.hget(`${prefix}:${QueueName.FrontierAdd}:${id}`, 'data'))!);
    await redis.quit();
    expect(data).toEqual({ envelope: 1, messages: [token('bad.test')], attempt: 3, errors: ['still broken'] });
  });

  it('reads a job written as one bare message (before envelopes)', async () => {
    const connection = new Redis(REDIS_URL);
    const queue = new Queue(QueueName.FrontierAdd, { connection, prefix });
    await queue.add(QueueName.FrontierAdd, token('bare.test'));
    await queue.close();
    await connection.quit();
    const hosts: string[] = [];
    await transport.consume(QueueName.FrontierAdd, async (p) => void hosts.push(new URL(p.urls[0].url).hostname));
    await until(async () => hosts.length === 1);
    expect(hosts).toEqual(['bare.test']);
  });
});

async function until(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
