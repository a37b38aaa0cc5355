import { Redis } from 'ioredis';
import { createRedis, mastersOf, spacedTags } from '@crawler/redis';
import { ReplyLosingProxy } from '@crawler/redis/testing';
import { bloomParameters } from '@crawler/bloom';
import { loadConfig } from '@crawler/config';
import { CrawlUrl } from '@crawler/contracts';
import { MemoryStateStore, RedisStateStore, StateStore } from '@crawler/state';
import { fingerprint64 } from '@crawler/url';
import { BloomSeenSet } from './bloom-seen-set';
import { fingerprintBucketBits, fingerprintSlot } from './exact-seen-set';
import { describeSeenStats, UrlSeenLayoutError, UrlSeenService } from './url-seen.service';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const REDIS_CLUSTER_URL = process.env.REDIS_CLUSTER_URL || 'redis+cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002';
type Mode = 'bloom' | 'exact';
/** `redisUrl`: where the service is told its state lives (a cluster shards the Bloom filter). */
const config = (mode: Mode = 'bloom', expectedUrls = 10_000, redisUrl?: string) =>
  loadConfig({}, { 'seen.mode': mode, 'seen.expectedUrls': expectedUrls, 'seen.falsePositiveRate': 0.001, ...(redisUrl ? { redisUrl } : {}) });
const link = (url: string, depth = 1): CrawlUrl => ({ url, depth, source: 'link', hops: 0 });
const urls = (n: number, prefix = 'http://site.test/page/') => Array.from({ length: n }, (_, i) => link(`${prefix}${i}`));

/** 20 concurrent calls, alternating between two services, each admitting the same 100 URLs. */
async function race(a: UrlSeenService, b: UrlSeenService) {
  const batch = urls(100, 'http://race.test/');
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).admit([...batch].reverse())));
  const admitted = results.flat().map((u) => u.url);
  expect(admitted).toHaveLength(100);
  expect(new Set(admitted).size).toBe(100);
  expect(new Set(admitted)).toEqual(new Set(batch.map((u) => u.url)));
}

/**
 * The behaviour both modes share, on one driver. `connect()` is one replica's connection to the shared
 * state (the same store in memory; a new connection with the same prefix in Redis).
 */
function urlSeenContract(driver: string, connect: () => StateStore, cleanup: () => Promise<void>, redisUrl?: string) {
  describe.each<Mode>(['bloom', 'exact'])(`UrlSeenService (%s mode, ${driver} store)`, (mode) => {
    const service = (state = connect()) => new UrlSeenService(state, config(mode, undefined, redisUrl));
    afterEach(cleanup);

    it('admits a URL once', async () => {
      const seen = service();
      expect(await seen.admit([link('http://site.test/a')])).toEqual([link('http://site.test/a')]);
      expect(await seen.admit([link('http://site.test/a')])).toEqual([]);
      expect(await seen.admit([link('http://site.test/a', 5), link('http://site.test/b')])).toEqual([link('http://site.test/b')]);
    });

    it('collapses repeats within one batch to one admission', async () => {
      const fresh = await service().admit([link('http://site.test/x'), link('http://site.test/y'), link('http://site.test/x', 3), link('http://site.test/y')]);
      expect(fresh.map((u) => u.url)).toEqual(['http://site.test/x', 'http://site.test/y']);
    });

    it('gives a batch asked again (a redelivery, on any replica) its first answer', async () => {
      const a = service();
      await a.admit([link('http://site.test/old')]);
      const batch = [link('http://site.test/old'), link('http://site.test/new-1'), link('http://site.test/new-2'), link('http://site.test/new-1', 4)];
      const first = await a.admitBatch(batch, 'batch-7');
      expect(first).toEqual({ fresh: [link('http://site.test/new-1', 4), link('http://site.test/new-2')], answerLost: false });
      expect(await service().admitBatch(batch, 'batch-7')).toEqual(first);
      // Another batch of the same URLs is a new question: they are seen by now.
      expect(await a.admitBatch(batch, 'batch-8')).toEqual({ fresh: [], answerLost: false });
      expect(await a.admitBatch([], 'batch-9')).toEqual({ fresh: [], answerLost: false });
    });

    it('loses no URL of a batch cut off between marking and keeping its answer: its repeat admits them all', async () => {
      const state = connect();
      await service(state).admit([link('http://site.test/old')]);
      const batch = [link('http://site.test/old'), link('http://site.test/new')];
      // The process dies as it would keep the answer: the URLs are marked, the answer is not kept.
      const dying = Object.create(state, {
        namespace: { value: (prefix: string) => Object.assign(Object.create(state.namespace(prefix)), { set: () => Promise.reject(new Error('killed')) }) },
      }) as StateStore;
      await expect(service(dying).admitBatch(batch, 'batch-1')).rejects.toThrow('killed');
      const repeat = await service().admitBatch(batch, 'batch-1');
      expect(repeat).toEqual({ fresh: batch, answerLost: true });
      // Its answer is now kept: a third delivery sends the same batch again, which the frontier enqueues once.
      expect(await service().admitBatch(batch, 'batch-1')).toEqual({ fresh: batch, answerLost: false });
    });

    it('answers an empty batch with nothing', async () => {
      expect(await service().admit([])).toEqual([]);
    });

    it('admits many distinct URLs (no false positives at this fill), then none of them again', async () => {
      const seen = service();
      expect(await seen.admit(urls(1000))).toHaveLength(1000);
      expect(await seen.admit(urls(1000))).toEqual([]);
    });

    it('never lets two replicas both admit a URL', async () => {
      await race(service(), service());
    });

    it('survives a restart: a new process on the same state admits nothing seen before', async () => {
      expect(await service().admit(urls(50))).toHaveLength(50);
      const restarted = service();
      await restarted.onModuleInit();
      expect(await restarted.admit([...urls(50), link('http://site.test/new')])).toEqual([link('http://site.test/new')]);
    });

    it('keeps its state in its own namespace', async () => {
      const state = connect();
      await service(state).admit(urls(5));
      await state.namespace('other').clear();
      expect(await service(state).admit(urls(5))).toEqual([]);
      await state.namespace('url-seen').clear();
      expect(await service(state).admit(urls(5))).toHaveLength(5);
    });

    it('counts what it holds', async () => {
      const a = service();
      await a.admit(urls(300));
      await service().admit(urls(400)); // 100 new
      const stats = await service().stats();
      expect(stats.mode).toBe(mode);
      expect(Math.abs(stats.urls - 400)).toBeLessThanOrEqual(mode === 'exact' ? 0 : 10);
      expect(stats.falsePositiveRate).toBeGreaterThan(0);
      expect(stats.falsePositiveRate).toBeLessThan(mode === 'exact' ? 1e-15 : 0.001);
    });

    it('refuses to boot on state written under another layout, naming the settings', async () => {
      await service().admit(urls(3));
      const other = new UrlSeenService(connect(), config(mode === 'bloom' ? 'exact' : 'bloom', undefined, redisUrl));
      await expect(other.onModuleInit()).rejects.toThrow(UrlSeenLayoutError);
      await expect(other.admit(urls(3))).rejects.toThrow(/URL_SEEN_MODE, URL_SEEN_EXPECTED_URLS and URL_SEEN_FALSE_POSITIVE_RATE/);
      const resized = new UrlSeenService(connect(), config(mode, 100_000_000, redisUrl));
      await expect(resized.onModuleInit()).rejects.toThrow(`was written as "${service().layout}"`);
      await service().onModuleInit(); // the same configuration boots
    });
  });
}

const memory = { store: new MemoryStateStore() };
urlSeenContract(
  'memory',
  () => memory.store,
  async () => {
    memory.store = new MemoryStateStore();
  },
);

/** Replicas' connections to one Redis (node or cluster) under one prefix per test. */
function redisReplicas(url: string): [connect: () => StateStore, cleanup: () => Promise<void>] {
  const run = { prefix: '', stores: [] as StateStore[] };
  return [
    () => {
      run.prefix ||= `t17s-url-seen-${process.pid}-${Math.random().toString(36).slice(2)}`;
      const store = new RedisStateStore({ url, prefix: run.prefix });
      run.stores.push(store);
      return store;
    },
    async () => {
      await run.stores[0]?.clear();
      await Promise.all(run.stores.splice(0).map((s) => s.close()));
      run.prefix = '';
    },
  ];
}
urlSeenContract('redis', ...redisReplicas(REDIS_URL));
// On a cluster the Bloom filter is sharded (16 keys over the masters), the exact buckets spread by slot.
urlSeenContract('redis cluster', ...redisReplicas(REDIS_CLUSTER_URL), REDIS_CLUSTER_URL);

describe('UrlSeenService, bloom mode', () => {
  it('reports the filter’s size from configuration and how full it is', async () => {
    const seen = new UrlSeenService(new MemoryStateStore(), config('bloom'));
    const expected = bloomParameters(10_000, 0.001);
    expect(await seen.stats()).toEqual({
      mode: 'bloom',
      shards: 1,
      ...expected,
      bitsSet: 0,
      fillRatio: 0,
      urls: 0,
      falsePositiveRate: 0,
      bytes: Math.ceil(expected.bits / 8),
    });
    expect(expected.bits).toBeGreaterThan(10_000 * 14);
    expect(expected.hashes).toBe(10);

    await seen.admit(urls(100));
    const after = await seen.stats();
    if (after.mode !== 'bloom') throw new Error('not bloom');
    expect(after.bits).toBe(expected.bits);
    expect(after.hashes).toBe(expected.hashes);
    expect(after.bitsSet).toBeGreaterThan(900);
    expect(after.bitsSet).toBeLessThanOrEqual(100 * expected.hashes);
    expect(after.fillRatio).toBeCloseTo(after.bitsSet / expected.bits, 10);
    expect(after.falsePositiveRate).toBeGreaterThan(0);
    expect(after.falsePositiveRate).toBeLessThan(0.001);
    expect(describeSeenStats(after)).toMatch(/^bloom: ≈ 100 URLs, 0\.\d\d % of 143,776 bits set \(0\.0 MB, 10 hashes\), false-positive rate now \d\.\de-\d+$/);
  });

  it('keeps its bits in one bitmap of its namespace, under the layout of before shards (a crawl resumes)', async () => {
    const state = new MemoryStateStore();
    const seen = new UrlSeenService(state, config('bloom'));
    expect(seen.layout).toBe('bloom bits=143776 hashes=10 hasher=murmur3x4-edh seed=0');
    await seen.admit(urls(5));
    expect(await state.namespace('url-seen').bitCount('bloom')).toBeGreaterThan(0);
    expect(await state.bitCount('bloom')).toBe(0);
  });

  it('takes URL_SEEN_EXPECTED_URLS=1e10 at 1 %: 23 shards of under 2^32 bits, 12 GB in all', async () => {
    const big = loadConfig({ URL_SEEN_EXPECTED_URLS: '1e10', URL_SEEN_FALSE_POSITIVE_RATE: '0.01' });
    const seen = new UrlSeenService(new MemoryStateStore(), big);
    expect(seen.layout).toMatch(/^bloom shards=23 bits=4\d{9} hashes=7 hasher=murmur3x4-edh seed=0$/);
    const stats = await seen.stats();
    if (stats.mode !== 'bloom') throw new Error('not bloom');
    expect(stats).toMatchObject({ shards: 23, hashes: 7, bitsSet: 0, urls: 0, falsePositiveRate: 0 });
    expect(stats.bits / 23).toBeLessThanOrEqual(2 ** 32);
    expect(stats.bytes / 1e9).toBeCloseTo(12, 0);
    expect(describeSeenStats(stats)).toMatch(/\(11981\.\d MB in 23 shards, 7 hashes\)/);
  });

  it('on a cluster, splits into 16 shards, each its own key, as many on each master give or take one; stats sum them', async () => {
    const prefix = `t17s-url-seen-${process.pid}-${Math.random().toString(36).slice(2)}`;
    const store = new RedisStateStore({ url: REDIS_CLUSTER_URL, prefix });
    const cluster = createRedis(REDIS_CLUSTER_URL);
    try {
      const seen = new UrlSeenService(store, config('bloom', 10_000, REDIS_CLUSTER_URL));
      expect(seen.layout).toMatch(/^bloom shards=16 bits=8986 hashes=10 .* slots=spaced$/);
      expect(await seen.admit(urls(2000))).toHaveLength(2000);
      expect(await seen.admit(urls(2000))).toHaveLength(0);
      const shardKeys = spacedTags('b', 16).map((tag) => `${prefix}:url-seen:bloom:{${tag}}`);
      const counts = await Promise.all(shardKeys.map((key) => cluster.bitcount(key)));
      for (const count of counts) expect(count).toBeGreaterThan(0); // 2000 URLs reach every shard
      expect(await cluster.exists(`${prefix}:url-seen:bloom`)).toBe(0);
      const masters = await Promise.all(mastersOf(cluster).map(async (node) => (await node.keys(`${prefix}:url-seen:bloom:*`)).length));
      expect(masters.reduce((a, b) => a + b, 0)).toBe(16);
      expect(Math.max(...masters) - Math.min(...masters)).toBeLessThanOrEqual(1);
      const stats = await seen.stats();
      if (stats.mode !== 'bloom') throw new Error('not bloom');
      expect(stats).toMatchObject({ shards: 16, bits: 16 * 8986, bitsSet: counts.reduce((a, b) => a + b, 0) });
      expect(Math.abs(stats.urls - 2000)).toBeLessThan(40);
    } finally {
      await store.clear();
      await store.close();
      await cluster.quit();
    }
  });

  it('on a cluster, reads a filter written before its shards were spaced (bloom:<i>), and refuses nothing else', async () => {
    const prefix = `t17s-url-seen-${process.pid}-${Math.random().toString(36).slice(2)}`;
    const store = new RedisStateStore({ url: REDIS_CLUSTER_URL, prefix });
    try {
      // What a url-seen of the version before wrote: the same filter under plain names, its layout recorded.
      const before = new BloomSeenSet(store.namespace('url-seen'), 10_000, 0.001, 16);
      await store.namespace('url-seen').hashSetIfAbsent('meta', 'layout', before.layout);
      await before.testAndAdd(urls(300).map((u) => u.url));
      const seen = new UrlSeenService(store, config('bloom', 10_000, REDIS_CLUSTER_URL));
      await seen.onModuleInit();
      expect(seen.layout).toBe(before.layout);
      expect(await seen.admit([...urls(300), link('http://site.test/new')])).toEqual([link('http://site.test/new')]);
      const resized = new UrlSeenService(store, config('bloom', 20_000, REDIS_CLUSTER_URL));
      await expect(resized.onModuleInit()).rejects.toThrow(UrlSeenLayoutError);
    } finally {
      await store.clear();
      await store.close();
    }
  });
});

describe('UrlSeenService, exact mode', () => {
  it('sizes its buckets so that each holds at most 256 fingerprints at the expected count', () => {
    expect(fingerprintBucketBits(1)).toBe(11); // the floor: the rest of a fingerprint stays < 2^53
    expect(fingerprintBucketBits(256 * 2 ** 11)).toBe(11);
    expect(fingerprintBucketBits(256 * 2 ** 11 + 1)).toBe(12);
    expect(fingerprintBucketBits(10_000_000)).toBe(16); // 152 a bucket
    expect(fingerprintBucketBits(1e15)).toBe(32);
  });

  it('stores each fingerprint whole: the bucket is its top bits, the member the rest, in decimal', () => {
    for (const bits of [11, 16, 20, 32]) {
      for (const url of ['http://site.test/', 'https://example.com/a?b=c', 'http://ünï.test/✓']) {
        const { bucket, member } = fingerprintSlot(url, bits);
        expect(member).toMatch(/^(0|[1-9]\d*)$/); // a canonical integer: Redis keeps it in an intset
        expect(Number(member)).toBeLessThan(2 ** (64 - bits));
        expect((BigInt(bucket) << BigInt(64 - bits)) + BigInt(member)).toBe(fingerprint64(url));
      }
    }
  });

  it('reports the set size and the collision odds', async () => {
    const seen = new UrlSeenService(new MemoryStateStore(), config('exact', 10_000_000));
    expect(await seen.stats()).toEqual({ mode: 'exact', urls: 0, buckets: 65_536, falsePositiveRate: 0 });
    await seen.admit(urls(1234));
    await seen.admit(urls(1300));
    expect(await seen.stats()).toEqual({ mode: 'exact', urls: 1300, buckets: 65_536, falsePositiveRate: 1300 / 2 ** 64 });
    expect(describeSeenStats(await seen.stats())).toBe('exact: 1,300 URL fingerprints in 65,536 sets, false-positive rate 7.0e-17');
  });

  it('keeps its fingerprints in Redis intsets of its namespace', async () => {
    const prefix = `t17s-url-seen-${process.pid}-${Math.random().toString(36).slice(2)}`;
    const store = new RedisStateStore({ url: REDIS_URL, prefix });
    const admin = new Redis(REDIS_URL);
    try {
      await new UrlSeenService(store, config('exact')).admit(urls(2000));
      const keys = await admin.keys(`${prefix}:*`);
      const buckets = keys.filter((k) => k.startsWith(`${prefix}:url-seen:fp:`));
      expect(buckets.length).toBeGreaterThan(500);
      expect(keys.sort()).toEqual([...buckets, `${prefix}:url-seen:fp-size`, `${prefix}:url-seen:meta`].sort());
      const encodings = new Set(await Promise.all(buckets.slice(0, 50).map((k) => admin.object('ENCODING', k))));
      expect(encodings).toEqual(new Set(['intset']));
      const sizes = await Promise.all(buckets.map((k) => admin.scard(k)));
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(2000);
    } finally {
      await store.clear();
      await store.close();
      await admin.quit();
    }
  });
});

describe('UrlSeenService, when Redis executes a marking and the reply is lost (a crash after the write)', () => {
  let proxy: ReplyLosingProxy;
  const stores: RedisStateStore[] = [];
  const prefix = `t-url-seen-reply-${process.pid}`;
  beforeAll(async () => {
    const { hostname, port } = new URL(REDIS_URL);
    proxy = await ReplyLosingProxy.start({ host: hostname, port: Number(port || 6379) });
  });
  afterEach(async () => {
    await stores[0]?.clear();
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });
  afterAll(() => proxy.close());
  const connect = () => {
    const store = new RedisStateStore({ url: proxy.url, prefix });
    stores.push(store);
    return store;
  };

  // The resent copy of the marking found the bits of the first and answered "all seen": the URLs were lost.
  it.each<[Mode, string]>([
    ['bloom', 'bitfield'],
    ['exact', 'evalsha'],
  ])('%s mode: the delivery fails and its redelivery admits the URLs, none lost', async (mode, command) => {
    const state = connect();
    const service = new UrlSeenService(state, config(mode));
    await service.admit([link('http://site.test/warm-up')]);
    const batch = [link('http://site.test/a'), link('http://site.test/b')];
    proxy.loseNextReplyTo(command);
    const admitted = new Set<string>();
    for (let delivery = 1; delivery <= 3; delivery++) {
      try {
        for (const u of (await service.admitBatch(batch, 'batch-reply')).fresh) admitted.add(u.url);
        break;
      } catch (error) {
        expect(String(error)).toMatch(/Connection lost before the reply to/);
      }
    }
    expect(proxy.lost).toBeGreaterThan(0);
    expect([...admitted].sort()).toEqual(['http://site.test/a', 'http://site.test/b']);
  });
});

describe('UrlSeenService: kept answers', () => {
  it('drops the answers of batches sent on at once in one step', async () => {
    const store = new MemoryStateStore();
    const seen = new UrlSeenService(store, config('bloom'));
    const ids = Array.from({ length: 10 }, (_, i) => `batch-${i}`);
    await Promise.all(ids.map((id, i) => seen.admitBatch(urls(3, `http://site.test/${i}/`), id)));
    const namespace = store.namespace('url-seen');
    expect(await namespace.get('answer:batch-0')).toBe('111');
    const delMany = jest.spyOn(MemoryStateStore.prototype, 'delMany');
    try {
      await Promise.all(ids.map((id) => seen.forgetBatch(id)));
      expect(delMany).toHaveBeenCalledTimes(1);
      expect(await Promise.all(ids.map((id) => namespace.get(`answer:${id}`)))).toEqual(ids.map(() => null));
    } finally {
      delMany.mockRestore();
    }
  });
});
