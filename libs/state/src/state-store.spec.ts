import { createRedis, isCluster, mastersOf, slotOf, type RedisClient } from '@crawler/redis';
import { type Cluster, Redis } from 'ioredis';
import { MEMORY_EXPIRY_SWEEP_MS, MemoryStateStore } from './memory-state.driver';
import { MANY_KEY_SCRIPTS, RedisStateStore } from './redis-state.driver';
import { stateStoreContract } from './state-store.contract';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const REDIS_CLUSTER_URL = process.env.REDIS_CLUSTER_URL || 'redis+cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002';
const uniquePrefix = () => `t17s-state-${process.pid}-${Math.random().toString(36).slice(2)}`;

stateStoreContract('memory', async () => new MemoryStateStore());
stateStoreContract('memory with a prefix', async () => new MemoryStateStore({ prefix: 'crawl' }));
stateStoreContract('redis', async () => new RedisStateStore({ url: REDIS_URL, prefix: uniquePrefix() }));
// The same contract on a Redis Cluster: a script, MULTI or multi-key command whose keys are in different
// slots is refused there (CROSSSLOT), so every operation passing here keeps to one slot per step.
stateStoreContract('redis cluster', async () => new RedisStateStore({ url: REDIS_CLUSTER_URL, prefix: uniquePrefix() }));

describe('RedisStateStore', () => {
  let redis: Redis;
  let prefix: string;

  beforeEach(() => {
    redis = new Redis(REDIS_URL);
    prefix = uniquePrefix();
  });

  afterEach(async () => {
    const leftovers = await redis.keys(`*${prefix}*`);
    if (leftovers.length > 0) await redis.del(...leftovers);
    await redis.quit();
  });

  it('sends a Bloom step as one BITFIELD written whole: one argument to ioredis, never an automatic pipeline', async () => {
    const store = new RedisStateStore({ url: REDIS_URL, prefix });
    const client = (store as unknown as { redis: Redis }).redis;
    const sent = jest.spyOn(client, 'sendCommand');
    try {
      await client.ping();
      sent.mockClear();
      const pending = store.bitsTestAndSet('bloom', [
        [1, 2, 3],
        [4, 0x01020304],
      ]);
      expect(client.autoPipelineQueueSize).toBe(0);
      expect(await pending).toEqual([false, false]);
      const commands = sent.mock.calls.map(([command]) => command as unknown as { name: string; args: unknown[] });
      // ioredis would copy, stringify and measure its 20 arguments one by one; it sees only the key.
      expect(commands.map((c) => [c.name, c.args])).toEqual([['bitfield', [`${prefix}:bloom`]]]);
      expect(await client.getbit(`${prefix}:bloom`, 0x01020304)).toBe(1);
      expect(
        await store.bitsTestAndSet('bloom', [
          [3, 0x01020304],
          [4, 5],
        ]),
      ).toEqual([true, false]);
    } finally {
      sent.mockRestore();
      await store.close();
    }
  });

  it('stores keys as `prefix:key`, a queue flag as `{prefix:key}:~active`, and clear() leaves none behind', async () => {
    const store = new RedisStateStore({ url: REDIS_URL, prefix });
    await store.set('k', 'v');
    await store.namespace('ns').queuePush('q', ['a']);
    const keys = (await redis.keys(`*${prefix}*`)).sort();
    expect(keys).toEqual([`${prefix}:k`, `${prefix}:ns:q`, `{${prefix}:ns:q}:~active`].sort());
    await store.clear();
    expect(await redis.keys(`*${prefix}*`)).toEqual([]);
    await store.close();
  });

  it('matches its prefix literally when clearing', async () => {
    const globby = new RedisStateStore({ url: REDIS_URL, prefix: `${prefix}[*]` });
    const other = new RedisStateStore({ url: REDIS_URL, prefix: `${prefix}x` });
    await globby.set('k', '1');
    await other.set('k', '2');
    await globby.clear();
    expect(await globby.get('k')).toBeNull();
    expect(await other.get('k')).toBe('2');
    await Promise.all([globby.close(), other.close()]);
  });

  it('stays atomic across separate connections', async () => {
    const stores = Array.from({ length: 5 }, () => new RedisStateStore({ url: REDIS_URL, prefix }));
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => stores[i % stores.length].bitsTestAndSet('bloom', [[3, 33, 333]])));
    expect(answers.flat().filter((allSet) => !allSet)).toHaveLength(1);
    await Promise.all(stores.map((s) => s.close()));
  });

  it('shares a client it was given without closing it', async () => {
    const store = new RedisStateStore({ client: redis, prefix });
    await store.set('k', 'v');
    await store.close();
    expect(await redis.get(`${prefix}:k`)).toBe('v');
  });
});

describe('RedisStateStore on a Redis Cluster', () => {
  let cluster: RedisClient;
  let store: RedisStateStore;
  let prefix: string;
  const sets = Array.from({ length: 24 }, (_, i) => `s${i}`);

  beforeEach(() => {
    cluster = createRedis(REDIS_CLUSTER_URL, { enableAutoPipelining: true, autoPipeliningIgnoredCommands: MANY_KEY_SCRIPTS });
    prefix = uniquePrefix();
    store = new RedisStateStore({ client: cluster, prefix });
  });

  afterEach(async () => {
    await store.clear();
    await cluster.quit();
  });

  it('is really a cluster whose sets here spread over slots and masters (else the tests below prove nothing)', async () => {
    expect(isCluster(cluster)).toBe(true);
    await store.setAddMany(sets.map((key) => [key, 'm']));
    const keysPerMaster = await Promise.all(mastersOf(cluster).map(async (node) => (await node.keys(`${prefix}:*`)).length));
    expect(keysPerMaster.filter((n) => n > 0).length).toBeGreaterThan(1);
    const slots = new Set(sets.map((key) => slotOf(`${prefix}:${key}`)));
    expect(slots.size).toBe(sets.length);
  });

  it('refuses one script over sets of different slots: what setAddMany splits by slot', async () => {
    const plain = createRedis(REDIS_CLUSTER_URL); // no auto-pipelining: the cluster itself refuses
    try {
      const script = "return redis.call('SADD', KEYS[1], 'x') + redis.call('SADD', KEYS[2], 'x')";
      await expect(plain.eval(script, 2, 't17s-state-a', 't17s-state-b')).rejects.toThrow(/CROSSSLOT/);
    } finally {
      await plain.quit();
    }
  });

  it('adds to and reads sets over many slots in one call, answering in the caller order', async () => {
    const entries: [string, string][] = sets.flatMap((key, i) => [
      [key, `m${i}`],
      [key, `m${i}`],
      [sets[(i + 1) % sets.length], `n${i}`],
    ]);
    const answers = await store.setAddMany(entries);
    expect(answers).toEqual(sets.flatMap(() => [true, false, true]));
    const members = await store.setMembersMany([...sets].reverse());
    expect(members.map((m) => m.sort())).toEqual(
      [...sets].reverse().map((key) => {
        const i = sets.indexOf(key);
        return [`m${i}`, `n${(i - 1 + sets.length) % sets.length}`].sort();
      }),
    );
  });

  it('clears, from a store that has sent nothing yet, every key of its prefix on every master', async () => {
    await store.setAddMany(sets.map((key) => [key, 'm']));
    await store.namespace('ns').queuePush('q', ['a']);
    const fresh = new RedisStateStore({ url: REDIS_CLUSTER_URL, prefix });
    await fresh.clear();
    await fresh.close();
    const left = await Promise.all(mastersOf(cluster).map((node) => node.keys(`*${prefix}*`)));
    expect(left.flat()).toEqual([]);
  });

  it('sends a Bloom batch (BITFIELD) outside the automatic pipelines', async () => {
    const client = createRedis(REDIS_CLUSTER_URL, { enableAutoPipelining: true, autoPipeliningIgnoredCommands: MANY_KEY_SCRIPTS });
    const bits = new RedisStateStore({ client, prefix });
    try {
      await client.ping();
      const pending = bits.bitsTestAndSet('bloom', [
        [1, 2, 3],
        [4, 5],
      ]);
      // Queued for an automatic pipeline, its arguments would be copied once more to find its key.
      expect(client.autoPipelineQueueSize).toBe(0);
      expect(await pending).toEqual([false, false]);
      expect(
        await bits.bitsTestAndSet('bloom', [
          [1, 2, 3],
          [4, 6],
        ]),
      ).toEqual([true, false]);
    } finally {
      await client.quit();
    }
  });

  it('sends the BITFIELDs asked in one turn (a Bloom step, one a shard) in one pipeline a master', async () => {
    const client = createRedis(REDIS_CLUSTER_URL, { enableAutoPipelining: true, autoPipeliningIgnoredCommands: MANY_KEY_SCRIPTS }) as Cluster;
    const bits = new RedisStateStore({ client, prefix });
    try {
      await client.ping();
      const shards = Array.from({ length: 12 }, (_, i) => `bloom:{b${i}}`);
      const masters = new Set(shards.map((key) => client.slots[slotOf(`${prefix}:${key}`)][0]));
      expect(masters.size).toBeGreaterThan(1);
      const pipelines = jest.spyOn(client, 'pipeline');
      const first = await Promise.all(shards.map((key, i) => bits.bitsTestAndSet(key, [[i, 100 + i]])));
      expect(first).toEqual(shards.map(() => [false]));
      expect(pipelines).toHaveBeenCalledTimes(masters.size);
      expect(await Promise.all(shards.map((key, i) => bits.bitsTestAndSet(key, [[i, 100 + i], [10_000]])))).toEqual(shards.map(() => [true, false]));
    } finally {
      await client.quit();
    }
  });

  it('keeps a queue and its active flag in one slot, and del removes both', async () => {
    expect(await store.queuePush('q', ['a'])).toBe(true);
    expect(await store.queuePush('q', ['b'])).toBe(false);
    await store.del('q');
    expect(await store.queuePush('q', ['c'])).toBe(true);
    expect(await store.queueHeadOrIdle('q')).toBe('c');
  });
});

describe('MemoryStateStore', () => {
  it('forgets keys whose expiry has passed even when nobody reads them again, as Redis does', async () => {
    // The downloader's lease claims are written once and never read again: kept until read, the embedded
    // crawl's memory grew by one key a page.
    const store = new MemoryStateStore();
    for (let i = 0; i < 1000; i++) await store.set(`claim:${i}`, 'downloader', 20);
    await store.setIfAbsent('lease', 'x', 20);
    await store.set('kept', 'for ever');
    expect(store.keyCount()).toBe(1002);
    await new Promise((r) => setTimeout(r, MEMORY_EXPIRY_SWEEP_MS + 50));
    await store.set('later', 'y', 60_000);
    expect(store.keyCount()).toBe(2);
    expect(await store.get('kept')).toBe('for ever');
    expect(await store.get('later')).toBe('y');
  });
});
