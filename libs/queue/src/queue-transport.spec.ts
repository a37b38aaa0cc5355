import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { QueueName } from '@crawler/contracts';
import { createRedis, scanKeys, unlinkKeys } from '@crawler/redis';
import { monitorCommands } from '@crawler/redis/testing';
import { bullmqKeyPrefix, bullmqQueueName } from './bullmq-keys';
import { BullmqQueueTransport } from './bullmq-queue.driver';
import { MemoryQueueTransport } from './memory-queue.driver';
import { queueTransportContract } from './queue-transport.contract';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
// The local cluster `scripts/redis-cluster.sh start` runs (as test/support/redis-cluster.ts).
const REDIS_CLUSTER_URL = process.env.REDIS_CLUSTER_URL || 'redis+cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002';
// Small attempts and backoff keep the retry tests in milliseconds; outages are waited out for a second.
/**
 * An outage period of 2 s: six outage retries of one message take a few hundred milliseconds on a quiet
 * machine, and were seen to take more than 1 s on a Redis Cluster sharing two loaded cores.
 */
const retries = { attempts: 2, backoffMs: 20, outageBackoffMaxMs: 60, outageMaxMs: 2000 };

queueTransportContract('memory', async () => new MemoryQueueTransport(retries));

describe.each([
  ['bullmq', REDIS_URL],
  ['bullmq on a Redis Cluster', REDIS_CLUSTER_URL],
])('%s', (name, url) => {
  let prefix = '';
  queueTransportContract(
    name,
    async () => {
      prefix = `t17q-${process.pid}-${Math.random().toString(36).slice(2)}`;
      return new BullmqQueueTransport({ connection: url, prefix, ...retries });
    },
    () => deleteKeys(`${prefix}:*`, url),
  );
});

describe('bullmq: a job whose workers keep dying', () => {
  const prefix = `test-stall-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const transports: BullmqQueueTransport[] = [];
  const make = () => {
    const transport = new BullmqQueueTransport({ connection: REDIS_URL, prefix, stalledMs: 500, ...retries });
    transports.push(transport);
    return transport;
  };

  /** As a SIGKILL would: its workers stop where they are (the lock is no longer renewed) and its connections drop. */
  async function die(transport: BullmqQueueTransport): Promise<void> {
    const internals = transport as unknown as { workers: { close(force: boolean): Promise<void> }[]; producer?: Redis; consumer?: Redis };
    await Promise.all(internals.workers.map((worker) => worker.close(true)));
    internals.producer?.disconnect();
    internals.consumer?.disconnect();
  }

  afterAll(async () => {
    // A dead transport's close() has nothing left to drain; it releases the queues' own handles.
    await Promise.all(transports.map((transport) => Promise.race([transport.close().catch(() => undefined), new Promise((r) => setTimeout(r, 2_000).unref())])));
    await deleteKeys(`${prefix}:*`);
  });

  it('is handed on after each death (three in a row here), not moved to the failed set after the second', async () => {
    const seed = { v: 1 as const, urls: [{ url: 'http://stall.test/', depth: 0, source: 'seed' as const, hops: 0 }] };
    const producer = make();
    await producer.add(QueueName.FilterUrls, seed);
    for (let death = 1; death <= 3; death++) {
      const doomed = make();
      let taken!: () => void;
      const took = new Promise<void>((resolve) => (taken = resolve));
      await doomed.consume(QueueName.FilterUrls, () => {
        taken();
        return new Promise<void>(() => undefined);
      });
      const handedOn = await Promise.race([took.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 8_000).unref())]);
      expect({ death, handedOn }).toEqual({ death, handedOn: true });
      await die(doomed);
    }
    const survivor = make();
    const handled = new Promise((resolve) => void survivor.consume(QueueName.FilterUrls, async (payload) => resolve(payload)));
    expect(await handled).toEqual(seed);
    expect((await producer.counts(QueueName.FilterUrls)).failed).toBe(0);
    // Each death left the message counted once, whichever worker held it; done, it is counted nowhere.
    await until(async () => JSON.stringify(await producer.messages(QueueName.FilterUrls)) === JSON.stringify({ waiting: 0, active: 0, delayed: 0, failed: 0 }));
  }, 40_000);
});

async function deleteKeys(pattern: string, url = REDIS_URL): Promise<void> {
  const redis = createRedis(url);
  try {
    for await (const keys of scanKeys(redis, pattern)) await unlinkKeys(redis, keys);
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

describe('memory transport and the event loop', () => {
  it('lets timers and I/O run between slices of a backlog instead of running it all in one turn of the loop', async () => {
    const transport = new MemoryQueueTransport({ validate: false });
    try {
      const jobs = 2000;
      for (let i = 0; i < jobs; i++) await transport.add(QueueName.FilterUrls, { v: 1, urls: [{ url: `http://h${i}.test/`, depth: 0, source: 'seed', hops: 0 }] });
      let handled = 0;
      let handledWhenTheLoopTurned = -1;
      const turned = new Promise<void>((resolve) =>
        setImmediate(() => {
          handledWhenTheLoopTurned = handled;
          resolve();
        }),
      );
      await transport.consume(
        QueueName.FilterUrls,
        async () => {
          // About 0.1 ms of work a job, the way a page's links keep a stage busy.
          const until = performance.now() + 0.1;
          while (performance.now() < until);
          handled++;
        },
        { concurrency: 4 },
      );
      await turned;
      while (handled < jobs) await new Promise((r) => setImmediate(r));
      expect(handledWhenTheLoopTurned).toBeGreaterThan(0);
      expect(handledWhenTheLoopTurned).toBeLessThan(jobs / 4);
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
    expect(
      [...calls]
        .filter(([, n]) => n > 1)
        .map(([h]) => h)
        .sort(),
    ).toEqual(['h3.test', 'h7.test']);
  });

  it('costs a job no Redis command looking into an empty queue (its worker waits on the marker, taken back once empty)', async () => {
    const handled: string[] = [];
    await transport.consume(QueueName.FrontierAdd, async (p) => void handled.push(p.urls[0].url), { concurrency: 16 });
    const sendOne = async (i: number) => {
      await transport.add(QueueName.FrontierAdd, token(`c${i}.test`));
      await until(async () => handled.length === i + 1);
      // The queue empties between jobs, as it mostly does between a pipeline's envelopes.
      await new Promise((r) => setTimeout(r, 30));
    };
    await sendOne(0);
    const { hostname, port } = new URL(REDIS_URL);
    let commands = 0;
    const monitor = await monitorCommands({ host: hostname, port: Number(port) }, ({ args }) => {
      if (args.some((arg) => arg.includes(prefix))) commands++;
    });
    const jobs = 10;
    try {
      for (let i = 1; i <= jobs; i++) await sendOne(i);
    } finally {
      monitor.stop();
    }
    // Add 9, take 10, taking back the mark BullMQ's take set again (4), finish 18, the marker wait: 42. BullMQ's
    // own loop took again at once after each take and again on each finish (7 and 11 more): 59.
    expect(commands / jobs).toBeLessThan(45);
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
    const keys = bullmqKeyPrefix(prefix, QueueName.FrontierAdd);
    const [id] = await redis.zrange(`${keys}failed`, 0, -1);
    const data = JSON.parse((await redis.hget(`${keys}${id}`, 'data'))!);
    await redis.quit();
    expect(data).toEqual({ envelope: 1, messages: [token('bad.test')], attempt: 3, errors: ['still broken'] });
    // The job was sent with two messages and keeps one: the count follows what it keeps.
    expect(await transport.messages(QueueName.FrontierAdd)).toEqual({ waiting: 0, active: 0, delayed: 0, failed: 1 });
  });

  it('counts the messages of jobs written before job names carried the count: a bare message, an envelope', async () => {
    const connection = new Redis(REDIS_URL);
    const queue = new Queue(bullmqQueueName(QueueName.FrontierAdd), { connection, prefix });
    await queue.add(QueueName.FrontierAdd, token('bare.test'));
    await queue.add(QueueName.FrontierAdd, { envelope: 1, messages: [token('a.test'), token('b.test'), token('c.test')], attempt: 0 });
    await queue.close();
    await connection.quit();
    expect(await transport.messages(QueueName.FrontierAdd)).toEqual({ waiting: 4, active: 0, delayed: 0, failed: 0 });
  });

  it('reads at most countMaxJobs jobs of a state and scales their sum up to the whole state', async () => {
    const bounded = new BullmqQueueTransport({ connection: REDIS_URL, prefix, countMaxJobs: 10, batchMaxMessages: 3, batchLingerMs: 1_000 });
    try {
      await Promise.all(Array.from({ length: 90 }, (_, i) => bounded.add(QueueName.FrontierAdd, token(`h${i}.test`))));
      expect((await bounded.counts(QueueName.FrontierAdd)).waiting).toBe(30);
      expect(await bounded.messages(QueueName.FrontierAdd)).toEqual({ waiting: 90, active: 0, delayed: 0, failed: 0 });
    } finally {
      await bounded.close();
    }
  });

  it('reads a job written as one bare message (before envelopes)', async () => {
    const connection = new Redis(REDIS_URL);
    const queue = new Queue(bullmqQueueName(QueueName.FrontierAdd), { connection, prefix });
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
