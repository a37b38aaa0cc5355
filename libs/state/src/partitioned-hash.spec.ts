import { createRedis, mastersOf, type RedisClient } from '@crawler/redis';
import { Redis } from 'ioredis';
import { MemoryStateStore } from './memory-state.driver';
import { CLUSTER_HASH_BUCKETS, hashBucketsFor, PartitionedHash } from './partitioned-hash';
import { RedisStateStore } from './redis-state.driver';
import type { StateStore } from './state-store';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const REDIS_CLUSTER_URL = process.env.REDIS_CLUSTER_URL || 'redis+cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002';
const uniquePrefix = () => `t17h-hash-${process.pid}-${Math.random().toString(36).slice(2)}`;

const hosts = Array.from({ length: 200 }, (_, i) => `host-${i}.test`);

describe('hashBucketsFor', () => {
  it('keeps one bucket on one node or in memory, and splits on a cluster', () => {
    expect(hashBucketsFor(undefined)).toBe(1);
    expect(hashBucketsFor('redis://127.0.0.1:6379/2')).toBe(1);
    expect(hashBucketsFor('redis+cluster://h1:7000,h2:7001')).toBe(CLUSTER_HASH_BUCKETS);
  });
});

const drivers: [string, () => StateStore][] = [
  ['memory', () => new MemoryStateStore()],
  ['redis', () => new RedisStateStore({ url: REDIS_URL, prefix: uniquePrefix() })],
  ['redis cluster', () => new RedisStateStore({ url: REDIS_CLUSTER_URL, prefix: uniquePrefix() })],
];

describe.each(drivers)('PartitionedHash on %s', (_, make) => {
  let store: StateStore;

  beforeEach(() => {
    store = make();
  });

  afterEach(async () => {
    await store.clear();
    await store.close();
  });

  it('with one bucket is the plain hash of that name (the layout before it was partitioned)', async () => {
    const hash = new PartitionedHash(store, 'urls', 1);
    await store.hashSet('urls', 'http://a.test/', 'old');
    expect(await hash.get('http://a.test/')).toBe('old');
    expect(await hash.setIfAbsent('http://b.test/', 'new')).toBeNull();
    expect(await store.hashGetAll('urls')).toEqual({ 'http://a.test/': 'old', 'http://b.test/': 'new' });
  });

  it('spreads fields over its buckets, each in `<name>:<bucket>`, and reads them all back', async () => {
    const hash = new PartitionedHash(store, 'host-pages', 64);
    await Promise.all(hosts.map((host, i) => hash.set(host, String(i))));
    const keys = new Set(hosts.map((host) => hash.keyOf(host)));
    expect(keys.size).toBeGreaterThan(48);
    for (const key of keys) expect(key).toMatch(/^host-pages:([0-9]|[1-5][0-9]|6[0-3])$/);
    expect(await store.hashGet(hash.keyOf('host-7.test'), 'host-7.test')).toBe('7');
    expect(await store.hashGetAll('host-pages')).toEqual({});
    expect(await hash.getAll()).toEqual(Object.fromEntries(hosts.map((host, i) => [host, String(i)])));
  });

  it('sets many fields in one step per bucket and reads them back in the order asked', async () => {
    const hash = new PartitionedHash(store, 'host-pages', 64);
    await hash.setMany(new Map(hosts.map((host, i) => [host, String(i)])));
    expect(await hash.getMany(['host-9.test', 'missing', 'host-3.test'])).toEqual(['9', null, '3']);
    expect(await hash.getAll()).toEqual(Object.fromEntries(hosts.map((host, i) => [host, String(i)])));
  });

  it('sets a field only when absent, answering the value already there', async () => {
    const hash = new PartitionedHash(store, 'original', 64);
    const answers = await Promise.all([hash.setIfAbsent('h1', 'a'), hash.setIfAbsent('h1', 'b')]);
    expect(answers.filter((a) => a === null)).toHaveLength(1);
    const kept = await hash.get('h1');
    expect(answers).toContain(kept);
    expect(await hash.setIfAbsent('h1', 'c')).toBe(kept);
    expect(await hash.get('missing')).toBeNull();
  });

  it("increments each field as hashIncrEach does, over many buckets, answering in the caller's order", async () => {
    const hash = new PartitionedHash(store, 'host-pages', 64);
    const fields = [hosts[0], hosts[1], hosts[0], hosts[2], hosts[0], hosts[1], ...hosts.slice(3, 40)];
    const plain = await store.hashIncrEach('plain', fields);
    expect(await hash.incrEach(fields)).toEqual(plain);
    expect(plain.slice(0, 6)).toEqual([1, 1, 2, 1, 3, 2]);
    expect(await hash.incrEach([hosts[1], hosts[0]])).toEqual([3, 4]);
    expect(await hash.incrEach([])).toEqual([]);
    await hash.incrMany(
      new Map([
        [hosts[0], -1],
        [hosts[5], 10],
      ]),
    );
    await hash.incrMany(new Map());
    expect(await hash.get(hosts[0])).toBe('3');
    expect(await hash.get(hosts[5])).toBe('11');
  });

  it('refuses a bucket count that is not a whole number of at least one', () => {
    expect(() => new PartitionedHash(store, 'h', 0)).toThrow(/buckets/);
    expect(() => new PartitionedHash(store, 'h', 2.5)).toThrow(/buckets/);
  });
});

describe('PartitionedHash on a Redis Cluster, with the cluster bucket count', () => {
  let cluster: RedisClient;
  let store: RedisStateStore;
  let prefix: string;

  beforeEach(() => {
    cluster = createRedis(REDIS_CLUSTER_URL);
    prefix = uniquePrefix();
    store = new RedisStateStore({ client: cluster, prefix });
  });

  afterEach(async () => {
    await store.clear();
    await cluster.quit();
  });

  it('puts buckets on every master', async () => {
    const hash = new PartitionedHash(store, 'urls', hashBucketsFor(REDIS_CLUSTER_URL));
    await hash.incrEach(hosts);
    const perMaster = await Promise.all(mastersOf(cluster).map(async (node) => (await node.keys(`${prefix}:urls:*`)).length));
    expect(perMaster.length).toBeGreaterThanOrEqual(3);
    for (const n of perMaster) expect(n).toBeGreaterThan(hosts.length / perMaster.length / 3);
    expect(perMaster.reduce((a, b) => a + b)).toBe(new Set(hosts.map((host) => hash.keyOf(host))).size);
    expect(Object.keys(await hash.getAll()).sort()).toEqual([...hosts].sort());
  });
});

describe('PartitionedHash on one Redis node', () => {
  it('stores one bucket under the plain key `prefix:name`', async () => {
    const prefix = uniquePrefix();
    const redis = new Redis(REDIS_URL);
    const store = new RedisStateStore({ client: redis, prefix });
    try {
      await new PartitionedHash(store, 'duplicates', hashBucketsFor(REDIS_URL)).set('http://a.test/', 'x');
      expect(await redis.keys(`${prefix}*`)).toEqual([`${prefix}:duplicates`]);
    } finally {
      await store.clear();
      await redis.quit();
    }
  });
});
