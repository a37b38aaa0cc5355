import { randomBytes } from 'node:crypto';
import { createRedis, type RedisClient } from '@crawler/redis';
import { CONTRACT_OPTIONS } from './frontier-store.contract';
import { EARLIER_CLUSTER_SHARDS, shardOfHost, shardPrefixes } from './frontier-shards';
import { FrontierShardsError, shardCountKey } from './recorded-shards';
import { OPEN_WAIT_MS } from './recorded-shards-frontier-store';
import { RedisFrontierStore } from './redis-frontier-store.driver';
import { createRedisFrontierStore } from './redis-frontier-store.factory';
import { ShardedFrontierStore } from './sharded-frontier-store.driver';

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const REDIS_CLUSTER_URL = process.env.REDIS_CLUSTER_URL || 'redis+cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002';
const newPrefix = () => `t35-shards-${randomBytes(4).toString('hex')}`;
const item = (host: string, name = 'x') => ({ host, priority: 0, item: `${host}/${name}` });

describe.each([
  ['one node', REDIS_URL],
  ['a cluster', REDIS_CLUSTER_URL],
])('the shard count a crawl keeps, on %s', (_name, url) => {
  let redis: RedisClient;
  const opened: { close(): Promise<void>; clear(): Promise<void> }[] = [];
  const open = (prefix: string, shards?: number) => {
    const store = createRedisFrontierStore({ url, prefix, ...(shards ? { shards } : {}) }, { ...CONTRACT_OPTIONS, backQueues: 64 });
    opened.push(store);
    return store;
  };

  beforeAll(() => {
    redis = createRedis(url);
  });
  afterEach(async () => {
    await Promise.all(
      opened.splice(0).map(async (s) =>
        s
          .clear()
          .catch(() => undefined)
          .then(() => s.close()),
      ),
    );
  });
  afterAll(async () => {
    await redis.quit();
  });

  const masters = async () => (url === REDIS_URL ? 1 : ((await redis.cluster('SHARDS')) as unknown[]).length);

  it('records the count a new crawl begins with: 1 on a node, one a master on a cluster', async () => {
    const prefix = newPrefix();
    const store = open(prefix);
    await store.open();
    expect(Number(await redis.get(shardCountKey(prefix)))).toBe(await masters());
    await store.enqueue([item('a.test')], 1000);
    expect((await store.stats()).size).toBe(1);
  });

  it('is read by every later process, whatever the default would be then', async () => {
    const prefix = newPrefix();
    const first = open(prefix, 5);
    await first.enqueue(
      ['a.test', 'b.test', 'c.test', 'd.test', 'e.test', 'f.test'].map((h) => item(h)),
      1000,
    );
    const later = open(prefix);
    await later.open();
    expect((await later.stats()).size).toBe(6);
    expect((await later.claim({ now: 2000, max: 10, leaseMs: 60_000 })).length).toBe(6);
  });

  it('refuses, naming both counts and the way out, a process asking for another count', async () => {
    const prefix = newPrefix();
    await open(prefix, 4).enqueue([item('a.test')], 1000);
    const other = open(prefix, 8);
    await expect(other.open()).rejects.toThrow(FrontierShardsError);
    await expect(other.enqueue([item('b.test')], 1000)).rejects.toThrow(/split into 4 shards, but FRONTIER_SHARDS asks for 8.*Unset FRONTIER_SHARDS/);
    expect((await open(prefix, 4).stats()).size).toBe(1);
  });

  it('agrees on one count when processes of a new crawl start at once', async () => {
    const prefix = newPrefix();
    const stores = Array.from({ length: 6 }, () => open(prefix));
    await Promise.all(stores.map((s) => s.open()));
    await Promise.all(stores.map((s, i) => s.enqueue([item(`h${i}.test`)], 1000)));
    expect(new Set(await Promise.all(stores.map(async (s) => (await s.stats()).size)))).toEqual(new Set([6]));
  });

  it('forgets the count when cleared: a crawl begun afresh records its own', async () => {
    const prefix = newPrefix();
    const store = open(prefix, 3);
    await store.enqueue([item('a.test')], 1000);
    await store.clear();
    expect(await redis.get(shardCountKey(prefix))).toBeNull();
    await open(prefix, 2).open();
    expect(await redis.get(shardCountKey(prefix))).toBe('2');
  });
});

describe('a crawl begun before shard counts were recorded', () => {
  it('resumes on a cluster with the 64 shards of then, and records them', async () => {
    const prefix = newPrefix();
    const client = createRedis(REDIS_CLUSTER_URL);
    try {
      // The store as the code of then left it: 64 shards, no record.
      const then = new ShardedFrontierStore(
        shardPrefixes(prefix, EARLIER_CLUSTER_SHARDS).map((p) => new RedisFrontierStore({ client, prefix: p }, CONTRACT_OPTIONS)),
        (host) => shardOfHost(host, EARLIER_CLUSTER_SHARDS),
      );
      const hosts = Array.from({ length: 20 }, (_, i) => `site${i}.test`);
      await then.enqueue(
        hosts.map((h) => item(h)),
        1000,
      );
      const now = createRedisFrontierStore({ url: REDIS_CLUSTER_URL, prefix }, CONTRACT_OPTIONS);
      await now.open();
      expect(await client.get(shardCountKey(prefix))).toBe(String(EARLIER_CLUSTER_SHARDS));
      expect((await now.stats()).size).toBe(20);
      await now.clear();
      await now.close();
      await then.close();
    } finally {
      await client.quit();
    }
  });

  it('resumes on a node as the plain store, and records 1', async () => {
    const prefix = newPrefix();
    const then = new RedisFrontierStore({ url: REDIS_URL, prefix }, CONTRACT_OPTIONS);
    await then.enqueue([item('a.test')], 1000);
    await then.close();
    const now = createRedisFrontierStore({ url: REDIS_URL, prefix }, CONTRACT_OPTIONS);
    const client = createRedis(REDIS_URL);
    try {
      expect((await now.stats()).size).toBe(1);
      expect(await client.get(shardCountKey(prefix))).toBe('1');
      // Still the plain layout: no key of the store holds a hash tag.
      expect((await client.keys(`${prefix}:*`)).filter((k) => k.includes('{'))).toEqual([]);
      // Had it been begun with FRONTIER_SHARDS=4 and resumed without, it would be refused, not read as empty.
      const resharded = createRedisFrontierStore({ url: REDIS_URL, prefix, shards: 4 }, CONTRACT_OPTIONS);
      await expect(resharded.open()).rejects.toThrow(FrontierShardsError);
      await resharded.close();
    } finally {
      await now.clear();
      await Promise.all([now.close(), client.quit()]);
    }
  });
});

describe('opening in an outage', () => {
  it('does not hold the boot: the count is read at the first call', async () => {
    const store = createRedisFrontierStore({ url: 'redis://127.0.0.1:1', prefix: newPrefix() }, CONTRACT_OPTIONS);
    const started = Date.now();
    await store.open();
    expect(Date.now() - started).toBeLessThan(OPEN_WAIT_MS + 1000);
    await store.close();
  });
});
