import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { createRedis, type RedisClient } from '@crawler/redis';
import { monitorCommands } from '@crawler/redis/testing';
import { CONTRACT_OPTIONS, frontierStoreContract } from './frontier-store.contract';
import type { FrontierShard, FrontierStore, FrontierStoreOptions } from './frontier-store';
import { EARLIER_CLUSTER_SHARDS, shardOfHost, shardPrefixes } from './frontier-shards';
import { MemoryFrontierStore } from './memory-frontier-store.driver';
import { ENQUEUE_SLICE, RedisFrontierStore } from './redis-frontier-store.driver';
import { shardCountKey } from './recorded-shards';
import { createRedisFrontierStore } from './redis-frontier-store.factory';
import { ShardedFrontierStore } from './sharded-frontier-store.driver';

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const REDIS_CLUSTER_URL = process.env.REDIS_CLUSTER_URL || 'redis+cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002';
const newPrefix = () => `t17f-frontier-${randomBytes(4).toString('hex')}`;

/** The store, emptied of its keys when closed. */
function clearedOnClose(store: FrontierStore): FrontierStore {
  const close = store.close.bind(store);
  store.close = async () => {
    await store.clear();
    await close();
  };
  return store;
}

/**
 * A store of `shards` shards whose shard of the test's hosts has the contract's back queues (the contract
 * counts them per shard: its competing hosts are of one site).
 */
const sharded = (url: string, shards: number) => async (options?: Partial<FrontierStoreOptions>) => {
  const settings = { ...CONTRACT_OPTIONS, ...options };
  const store = createRedisFrontierStore({ url, prefix: newPrefix(), shards }, { ...settings, backQueues: settings.backQueues * shards });
  return clearedOnClose(store);
};

frontierStoreContract('memory', async (options) => new MemoryFrontierStore({ ...CONTRACT_OPTIONS, ...options }));

// Two items a queue in memory at either end: nearly every queued URL of the contract goes through the spill file.
frontierStoreContract(
  'memory, spilling to a file',
  async (options) =>
    new MemoryFrontierStore({ ...CONTRACT_OPTIONS, ...options }, { file: join(mkdtempSync(join(tmpdir(), 'frontier-spill-')), 'queued.spill'), chunkItems: 2 }),
);

frontierStoreContract('redis', async (options) => clearedOnClose(new RedisFrontierStore({ url: REDIS_URL, prefix: newPrefix() }, { ...CONTRACT_OPTIONS, ...options })));

frontierStoreContract('redis, one node, 4 shards', sharded(REDIS_URL, 4));

// Every script of every shard runs here: a key outside its shard's slot would fail with CROSSSLOT.
frontierStoreContract(`redis cluster, ${EARLIER_CLUSTER_SHARDS} shards`, sharded(REDIS_CLUSTER_URL, EARLIER_CLUSTER_SHARDS));

describe.each([
  ['memory', () => new MemoryFrontierStore(CONTRACT_OPTIONS)],
  ['redis', () => new RedisFrontierStore({ url: REDIS_URL, prefix: newPrefix() }, CONTRACT_OPTIONS)],
])('%s, as a shard', (_name, make: () => FrontierShard) => {
  it('answers each enqueue, claim and completion with the earliest due time after it', async () => {
    const store = make();
    const T = 1_000_000;
    try {
      const enqueued = await store.enqueueAndLook(
        ['a.test/1', 'a.test/2', 'b.test/1'].map((item) => ({ host: item.split('/')[0], priority: 0, item })),
        T,
      );
      expect(enqueued).toEqual({ value: 3, dueAt: T });
      const claimed = await store.claimAndLook({ now: T, max: 10, leaseMs: 1000 });
      expect(claimed.value.map((c) => c.item).sort()).toEqual(['a.test/1', 'b.test/1']);
      expect(claimed.dueAt).toBeNull(); // both hosts in flight
      const lease = claimed.value.find((c) => c.host === 'a.test')!.leaseId;
      expect(await store.completeAndLook(lease, { nextAt: T + 500 }, T)).toEqual({ value: true, dueAt: T + 500 });
      expect(await store.completeAndLook(lease, { nextAt: T }, T)).toEqual({ value: false, dueAt: T + 500 });
    } finally {
      if (store instanceof RedisFrontierStore) await store.clear();
      await store.close();
    }
  });
});

describe('createRedisFrontierStore', () => {
  it('is the plain store, keys as before sharding, for one shard on one node', async () => {
    const prefix = newPrefix();
    const store = createRedisFrontierStore({ url: REDIS_URL, prefix }, CONTRACT_OPTIONS);
    const redis = new Redis(REDIS_URL);
    try {
      await store.enqueue([{ host: 'www.example.com', priority: 0, item: 'x' }], 1000);
      expect(await redis.exists(`${prefix}:init`)).toBe(1);
      expect((await redis.keys(`${prefix}:*`)).filter((k) => k.includes('{'))).toEqual([]);
    } finally {
      await store.clear();
      await Promise.all([store.close(), redis.quit()]);
    }
  });

  it('puts a shard’s keys under its hash tag and gives it its part of the back queues', async () => {
    const prefix = newPrefix();
    const store = createRedisFrontierStore({ url: REDIS_URL, prefix, shards: 4 }, { ...CONTRACT_OPTIONS, backQueues: 10 });
    const redis = new Redis(REDIS_URL);
    try {
      await store.enqueue([{ host: 'www.example.com', priority: 0, item: 'x' }], 1000);
      // Every key but the crawl's shard count, which stands beside the shards.
      const keys = (await redis.keys(`${prefix}:*`)).filter((k) => k !== shardCountKey(prefix));
      expect(keys.length).toBeGreaterThan(0);
      const tags = new Set(keys.map((k) => /^[^{]*(\{[^}]+\}):/.exec(k)?.[1]));
      expect(tags.size).toBe(1);
      expect([...tags][0]).toMatch(/^\{f\d/);
      expect(await store.stats()).toMatchObject({ backQueuesInUse: 1, backQueuesFree: 4 * 3 - 1 });
    } finally {
      await store.clear();
      await Promise.all([store.close(), redis.quit()]);
    }
  });
});

describe('RedisFrontierStore', () => {
  it('keeps its state across instances (a restarted frontier resumes)', async () => {
    const prefix = newPrefix();
    const first = new RedisFrontierStore({ url: REDIS_URL, prefix }, CONTRACT_OPTIONS);
    await first.enqueue(
      [
        { host: 'a', priority: 0, item: 'a/1' },
        { host: 'a', priority: 0, item: 'a/2' },
      ],
      1000,
    );
    const [lease] = await first.claim({ now: 1000, max: 10, leaseMs: 100 });
    await first.close();
    const second = new RedisFrontierStore({ url: REDIS_URL, prefix }, CONTRACT_OPTIONS);
    expect((await second.stats()).size).toBe(2);
    expect(await second.reclaimExpired(1100, 1100)).toBe(1);
    const claims = await second.claim({ now: 1100, max: 10, leaseMs: 100 });
    expect(claims.map((c) => c.item)).toEqual([lease.item]);
    await second.clear();
    await second.close();
  });

  it('remembers a batch id for batchMemoryMs, then forgets it (its key expires)', async () => {
    const prefix = newPrefix();
    const store = new RedisFrontierStore({ url: REDIS_URL, prefix }, { ...CONTRACT_OPTIONS, batchMemoryMs: 300 });
    const redis = new Redis(REDIS_URL);
    try {
      expect(await store.enqueue([{ host: 'a', priority: 0, item: 'a/1' }], 1000, 'b1')).toBe(1);
      const ttl = await redis.pttl(`${prefix}:batch:b1`);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(300);
      expect(await store.enqueue([{ host: 'a', priority: 0, item: 'a/1' }], 1000, 'b1')).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(await redis.exists(`${prefix}:batch:b1`)).toBe(0);
    } finally {
      await redis.quit();
      await store.clear();
      await store.close();
    }
  });

  it('sends the slices of batches enqueued at once in one script call, each batch recorded apart', async () => {
    const store = new RedisFrontierStore({ url: REDIS_URL, prefix: newPrefix() }, CONTRACT_OPTIONS);
    try {
      expect(await store.enqueue([{ host: 'a', priority: 0, item: 'a/1' }], 1000, 'b1')).toBe(1);
      const run = jest.spyOn(store as unknown as { run: (...args: unknown[]) => Promise<unknown> }, 'run');
      const added = await Promise.all([
        store.enqueue([{ host: 'a', priority: 0, item: 'a/1' }], 1000, 'b1'),
        store.enqueue(
          [
            { host: 'b', priority: 1, item: 'b/1' },
            { host: 'a', priority: 0, item: 'a/2' },
          ],
          1001,
          'b2',
        ),
        store.enqueue([], 1002, 'b3'),
        store.enqueue([{ host: 'c', priority: 0, item: 'c/1' }], 1002),
      ]);
      expect(added).toEqual([0, 2, 0, 1]);
      expect(run).toHaveBeenCalledTimes(1);
      expect((await store.stats()).size).toBe(4);
      expect(await store.enqueue([{ host: 'b', priority: 1, item: 'b/1' }], 1003, 'b2')).toBe(0);
      const claims = await store.claim({ now: 2000, max: 10, leaseMs: 100 });
      expect(claims.map((c) => c.item).sort()).toEqual(['a/1', 'b/1', 'c/1']);
    } finally {
      await store.clear();
      await store.close();
    }
  });
});

/** Runs `use` on a Redis store under a prefix of its own, with a client beside it; clears the store and closes both after. */
async function withRedisStore(options: Partial<FrontierStoreOptions>, use: (store: RedisFrontierStore, redis: Redis, prefix: string) => Promise<void>): Promise<void> {
  const prefix = newPrefix();
  const store = new RedisFrontierStore({ url: REDIS_URL, prefix }, { ...CONTRACT_OPTIONS, ...options });
  const redis = new Redis(REDIS_URL);
  try {
    await use(store, redis, prefix);
  } finally {
    await store.clear();
    await Promise.all([store.close(), redis.quit()]);
  }
}

describe('RedisFrontierStore completions', () => {
  it('ends the leases completed at once in one script call, each answered for itself, the counters written once', async () => {
    await withRedisStore({}, async (store) => {
      await store.enqueue(
        ['a', 'b', 'c'].flatMap((host) => [1, 2].map((n) => ({ host, priority: 0, item: `${host}/${n}` }))),
        1000,
      );
      const claims = await store.claim({ now: 2000, max: 10, leaseMs: 60_000 });
      expect(claims.map((c) => c.item).sort()).toEqual(['a/1', 'b/1', 'c/1']);
      const [a, b, c] = [...claims].sort((x, y) => x.item.localeCompare(y.item));
      const run = jest.spyOn(store as unknown as { run: (...args: unknown[]) => Promise<unknown> }, 'run');
      const answers = await Promise.all([
        store.completeAndLook(a.leaseId, { nextAt: 2500, fetched: true, audit: ['a1', 'a2'] }, 2100),
        store.completeAndLook('no-such-lease', { nextAt: 2500, fetched: true }, 2100),
        store.completeAndLook(b.leaseId, { nextAt: 2600, requeue: 'b/1', audit: ['b1'] }, 2101),
        store.completeAndLook(c.leaseId, { nextAt: 2700, retryLater: { item: 'c/1', priority: 0, dueAt: 9000 } }, 2102),
      ]);
      expect(run).toHaveBeenCalledTimes(1);
      expect(answers.map((x) => x.value)).toEqual([true, false, true, true]);
      // The heap after them all: a, b and c due again at their nextAt.
      expect(answers.map((x) => x.dueAt)).toEqual([2500, 2500, 2500, 2500]);
      // a fetched (one page counted, its URL gone), b put back, c set aside until 9000: 4 queued, no lease.
      expect(await store.counts()).toEqual({ leased: 0, fetched: 1 });
      expect((await store.stats()).size).toBe(4);
      expect(await store.auditLog('a')).toEqual(['a1', 'a2']);
      expect(await store.auditLog('b')).toEqual(['b1']);
      const next = await store.claim({ now: 3000, max: 10, leaseMs: 60_000 });
      expect(next.map((x) => x.item).sort()).toEqual(['a/2', 'b/1', 'c/2']);
    });
  });
});

describe('RedisFrontierStore claims', () => {
  it('finds a round’s due hosts a group at a time: three commands a claim of a host without an address, not five', async () => {
    await withRedisStore({ backQueues: 32 }, async (store, client, prefix) => {
      const hosts = Array.from({ length: 20 }, (_, i) => `h${i}.test`);
      await store.enqueue(
        hosts.map((host) => ({ host, priority: 0, item: `${host}/1` })),
        1000,
      );
      let commands = 0;
      const monitor = await monitorCommands(client.options, ({ args }) => {
        if (args.some((arg) => arg.startsWith(prefix))) commands++;
      });
      const claims = await store.claim({ now: 2000, max: 50, leaseMs: 60_000 }).finally(async () => {
        await new Promise((r) => setTimeout(r, 50));
        monitor.stop();
      });
      expect(claims.map((c) => c.item).sort()).toEqual(hosts.map((host) => `${host}/1`).sort());
      expect(new Set(claims.map((c) => c.leaseId)).size).toBe(20);
      // Each claim: the host's hash read and written, its URL popped. The round: the script, its groups (a pop
      // and the hosts' names), the lease ids, records and expiries, and the heap's top.
      expect(commands).toBeLessThanOrEqual(3 * 20 + 10);
    });
  });
});

describe('RedisFrontierStore leases', () => {
  it('keeps a lease under a key of its own, ended by one GETDEL, and still ends, counts and reclaims one a store kept in its lease hash', async () => {
    await withRedisStore({}, async (store, redis, prefix) => {
      await store.enqueue(
        ['a', 'b', 'c'].map((host) => ({ host, priority: 0, item: `${host}/1` })),
        1000,
      );
      const claims = await store.claim({ now: 2000, max: 10, leaseMs: 60_000 });
      expect(claims).toHaveLength(3);
      const [a, b, c] = [...claims].sort((x, y) => x.item.localeCompare(y.item));
      expect(await redis.get(`${prefix}:l:${a.leaseId}`)).toMatch(/\ta\t\ta\/1$/);
      // b and c as an older store kept them: fields of the hash `lease`.
      for (const old of [b, c]) {
        await redis.hset(`${prefix}:lease`, old.leaseId, (await redis.get(`${prefix}:l:${old.leaseId}`))!);
        await redis.del(`${prefix}:l:${old.leaseId}`);
      }
      expect(await store.counts()).toEqual({ leased: 3, fetched: 0 });
      expect(await store.complete(a.leaseId, { nextAt: 2500, fetched: true }, 2100)).toBe(true);
      expect(await store.complete(b.leaseId, { nextAt: 2500, fetched: true }, 2100)).toBe(true);
      expect(await store.complete(b.leaseId, { nextAt: 2500, fetched: true }, 2100)).toBe(false);
      expect(await store.reclaimWhere((claim) => claim.host === 'c', 2200, 2300)).toBe(1);
      expect(await store.counts()).toEqual({ leased: 0, fetched: 2 });
      expect(await redis.exists(`${prefix}:lease`, `${prefix}:l:${a.leaseId}`)).toBe(0);
      expect((await store.claim({ now: 3000, max: 10, leaseMs: 60_000 })).map((x) => x.item)).toEqual(['c/1']);
    });
  });
});

describe('RedisFrontierStore audit logs', () => {
  it('trims a host’s log once it holds half as many entries again, not at every push, and reads its last ones', async () => {
    await withRedisStore({}, async (store, redis, prefix) => {
      const length = CONTRACT_OPTIONS.auditLength;
      const entries = Array.from({ length: length + Math.ceil(length / 2) + 1 }, (_, i) => String(i));
      const lengths: number[] = [];
      for (const entry of entries) {
        await store.audit('a', [entry]);
        lengths.push(await redis.llen(`${prefix}:audit:a`));
        expect(await store.auditLog('a')).toEqual(entries.slice(0, lengths.length).slice(-length));
      }
      // Pushed past the log's length without a trim, then trimmed to it once past half as many again.
      expect(lengths).toEqual([...entries.slice(0, -1).map((_, i) => i + 1), length]);
    });
  });
});

describe('MemoryFrontierStore', () => {
  it('forgets batch ids past batchMemoryMs, so they take no memory for ever', async () => {
    const store = new MemoryFrontierStore({ ...CONTRACT_OPTIONS, batchMemoryMs: 100 });
    expect(await store.enqueue([{ host: 'a', priority: 0, item: 'a/1' }], 1000, 'b1')).toBe(1);
    expect(await store.enqueue([{ host: 'a', priority: 0, item: 'a/1' }], 1099, 'b1')).toBe(0);
    expect(await store.enqueue([{ host: 'b', priority: 0, item: 'b/1' }], 1100, 'b2')).toBe(1);
    expect((store as unknown as { batches: Map<string, number> }).batches.has('b1')).toBe(false);
  });
});

describe('RedisFrontierStore, the count of front-queue entries', () => {
  /** Hosts beyond the back queues wait in the front queues: 2 back queues, 5 hosts. */
  const options = { ...CONTRACT_OPTIONS, backQueues: 2 };
  const hosts = ['a', 'b', 'c', 'd', 'e'];

  /** Claims and completes until every host's URL was handed out once (or a simulated second passed). */
  async function handOutAll(store: RedisFrontierStore): Promise<string[]> {
    const handed: string[] = [];
    for (let now = 1000; handed.length < hosts.length && now < 2000; now += 10) {
      for (const c of await store.claim({ now, max: 10, leaseMs: 100 })) {
        handed.push(c.item);
        await store.complete(c.leaseId, { nextAt: now }, now);
      }
    }
    return handed;
  }

  it('routes every waiting URL of a store written before the count was kept', async () => {
    const prefix = newPrefix();
    const store = new RedisFrontierStore({ url: REDIS_URL, prefix }, options);
    const redis = new Redis(REDIS_URL);
    try {
      await store.enqueue(
        hosts.map((host) => ({ host, priority: 0, item: `${host}/1` })),
        1000,
      );
      expect(await redis.get(`${prefix}:fq`)).toBe('3');
      await redis.del(`${prefix}:fq`);
      expect((await handOutAll(store)).sort()).toEqual(hosts.map((h) => `${h}/1`));
      expect(await redis.get(`${prefix}:fq`)).toBe('0');
    } finally {
      await store.clear();
      await Promise.all([store.close(), redis.quit()]);
    }
  });

  it('mends a count that has drifted too high, stranding no URL', async () => {
    const prefix = newPrefix();
    const store = new RedisFrontierStore({ url: REDIS_URL, prefix }, options);
    const redis = new Redis(REDIS_URL);
    try {
      await store.enqueue(
        hosts.map((host) => ({ host, priority: 0, item: `${host}/1` })),
        1000,
      );
      // A count too high is mended by the first route that finds every front queue empty.
      await redis.set(`${prefix}:fq`, '50');
      expect((await handOutAll(store)).sort()).toEqual(hosts.map((h) => `${h}/1`));
      expect(await redis.get(`${prefix}:fq`)).toBe('0');
    } finally {
      await store.clear();
      await Promise.all([store.close(), redis.quit()]);
    }
  });
});

describe('RedisFrontierStore, a batch cut short by a crash', () => {
  const URLS = 2 * ENQUEUE_SLICE + 500; // three slices: 2,000, 2,000 and 500 URLs
  const SLICES = Math.ceil(URLS / ENQUEUE_SLICE);
  const batch = Array.from({ length: URLS }, (_, i) => ({ host: `h${i % 300}.test`, priority: i % 4, item: `u${i}` }));
  let redis: Redis;
  beforeAll(() => (redis = new Redis(REDIS_URL)));
  afterAll(() => redis.quit());

  /** Every URL waiting in the store's front and back queues (front entries are `host\titem`). */
  async function queued(prefix: string): Promise<string[]> {
    const keys = [
      ...Array.from({ length: CONTRACT_OPTIONS.frontQueues }, (_, i) => `${prefix}:f:${i}`),
      ...Array.from({ length: CONTRACT_OPTIONS.backQueues }, (_, j) => `${prefix}:b:${j}`),
    ];
    const lists = await Promise.all(keys.map((key) => redis.lrange(key, 0, -1)));
    return lists.flat().map((entry) => entry.slice(entry.indexOf('\t') + 1));
  }

  for (let cut = 0; cut < SLICES; cut++) {
    it(`ends with every URL of a ${URLS}-URL batch exactly once when redelivered after a crash after slice ${cut + 1} of ${SLICES}`, async () => {
      const prefix = newPrefix();
      const crashing = new RedisFrontierStore(
        {
          url: REDIS_URL,
          prefix,
          afterSlice: (slice) => {
            if (slice === cut) throw new Error(`crash after slice ${slice}`);
          },
        },
        CONTRACT_OPTIONS,
      );
      await expect(crashing.enqueue(batch, 1000, 'sitemap-batch')).rejects.toThrow('crash');
      await crashing.close();
      const restarted = new RedisFrontierStore({ url: REDIS_URL, prefix }, CONTRACT_OPTIONS);
      try {
        const added = await restarted.enqueue(batch, 2000, 'sitemap-batch');
        const again = await restarted.enqueue(batch, 3000, 'sitemap-batch');
        const items = await queued(prefix);
        expect(items).toHaveLength(URLS);
        expect(new Set(items).size).toBe(URLS);
        expect((await restarted.stats()).size).toBe(URLS);
        expect([added, again]).toEqual([URLS - Math.min(URLS, (cut + 1) * ENQUEUE_SLICE), 0]);
      } finally {
        await restarted.clear();
        await restarted.close();
      }
    });
  }
});

describe('ShardedFrontierStore on Redis, a batch cut short by a crash in one shard', () => {
  const URLS = 3 * ENQUEUE_SLICE; // over two shards: more than one slice in each
  const batch = Array.from({ length: URLS }, (_, i) => ({ host: `h${i % 300}.test`, priority: i % 4, item: `u${i}` }));
  const SHARDS = 2;

  function open(prefix: string, client: RedisClient, crashIn?: number) {
    const afterSlice = (slice: number) => {
      if (slice === 0) throw new Error('crash after slice 0');
    };
    const shards = shardPrefixes(prefix, SHARDS).map(
      (p, shard) => new RedisFrontierStore({ client, prefix: p, ...(shard === crashIn ? { afterSlice } : {}) }, CONTRACT_OPTIONS),
    );
    return new ShardedFrontierStore(shards, (host) => shardOfHost(host, SHARDS));
  }

  it('ends with every URL exactly once when redelivered: each shard resumes where it stopped', async () => {
    const prefix = newPrefix();
    const client = createRedis(REDIS_URL);
    try {
      const inShard1 = batch.filter((u) => shardOfHost(u.host, SHARDS) === 1).length;
      expect(inShard1).toBeGreaterThan(ENQUEUE_SLICE);
      await expect(open(prefix, client, 1).enqueue(batch, 1000, 'sitemap-batch')).rejects.toThrow('crash');
      const restarted = open(prefix, client);
      expect(await restarted.enqueue(batch, 2000, 'sitemap-batch')).toBe(inShard1 - ENQUEUE_SLICE);
      expect(await restarted.enqueue(batch, 3000, 'sitemap-batch')).toBe(0);
      expect((await restarted.stats()).size).toBe(URLS);
      await restarted.clear();
    } finally {
      await client.quit();
    }
  });
});
