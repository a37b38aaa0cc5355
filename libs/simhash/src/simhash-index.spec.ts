import { Redis } from 'ioredis';
import { MemoryStateStore, RedisStateStore, StateStore } from '@crawler/state';
import { hammingDistance, toHex } from './simhash';
import { SimhashIndex } from './simhash-index';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const REDIS_CLUSTER_URL = process.env.REDIS_CLUSTER_URL || 'redis+cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002';
const uniquePrefix = () => `t17s-simhash-${process.pid}-${Math.random().toString(36).slice(2)}`;

/** Deterministic random simhashes (xorshift32), so the statistics below never flake. */
function randomSimhashes(seed: number) {
  let s = seed;
  const next = () => ((s ^= s << 13), (s ^= s >>> 17), (s ^= s << 5), s >>> 0);
  return {
    simhash: () => toHex(next(), next()),
    /** `simhash` with `count` distinct random bits flipped. */
    flip: (simhash: string, count: number) => flipBits(simhash, pick(next, count)),
    int: (n: number) => next() % n,
  };
}

function pick(next: () => number, count: number): number[] {
  const bits = new Set<number>();
  while (bits.size < count) bits.add(next() % 64);
  return [...bits];
}

/** `simhash` with the given bits (0 = most significant) flipped. */
function flipBits(simhash: string, bits: number[]): string {
  let hi = parseInt(simhash.slice(0, 8), 16);
  let lo = parseInt(simhash.slice(8), 16);
  for (const bit of bits) {
    if (bit < 32) hi ^= 1 << (31 - bit);
    else lo ^= 1 << (63 - bit);
  }
  return toHex(hi >>> 0, lo >>> 0);
}

function simhashIndexContract(name: string, make: () => StateStore) {
  describe(`SimhashIndex on ${name}`, () => {
    let store: StateStore;

    beforeEach(() => {
      store = make();
    });

    afterEach(async () => {
      await store.clear();
      await store.close();
    });

    it('cuts 64 bits into maxDistance + 1 bands (4 × 16 by default)', () => {
      expect(new SimhashIndex(store)).toMatchObject({ maxDistance: 3, bands: 4, bandBits: 16 });
      expect(new SimhashIndex(store, { maxDistance: 1 })).toMatchObject({ bands: 2, bandBits: 32 });
      expect(new SimhashIndex(store, { maxDistance: 5 })).toMatchObject({ bands: 6, bandBits: 10 });
      expect(() => new SimhashIndex(store, { maxDistance: -1 })).toThrow(RangeError);
      expect(() => new SimhashIndex(store, { maxDistance: 16 })).toThrow(RangeError);
      expect(() => new SimhashIndex(store, { maxDistance: 2.5 })).toThrow(RangeError);
    });

    it('finds an indexed simhash up to 3 bits away, in one band or spread over three, with its id', async () => {
      const index = new SimhashIndex(store);
      const original = 'a5a5f00f12345678';
      expect(await index.add(original, 'http://a.test/')).toBeNull();
      const cases: number[][] = [[], [0], [63], [0, 1, 2], [5, 21, 37], [15, 16, 47], [48, 50, 63]];
      for (const bits of cases) {
        const query = flipBits(original, bits);
        expect(await index.findNear(query)).toEqual({ simhash: original, distance: bits.length, id: 'http://a.test/' });
      }
    });

    it('finds nothing 4 or more bits away, even when most bands agree', async () => {
      const index = new SimhashIndex(store);
      const original = 'a5a5f00f12345678';
      await index.add(original, 'http://a.test/');
      for (const bits of [
        [0, 1, 2, 3],
        [0, 16, 32, 48],
        [60, 61, 62, 63],
        [1, 2, 3, 4, 5, 6, 7, 8],
      ]) {
        expect(await index.findNear(flipBits(original, bits))).toBeNull();
      }
      expect(await index.findNear('5a5a0ff0edcba987')).toBeNull(); // every bit flipped
    });

    it('answers the nearest of several candidates', async () => {
      const index = new SimhashIndex(store);
      const query = '0123456789abcdef';
      await index.add(flipBits(query, [1, 2, 3]), 'three');
      await index.add(flipBits(query, [40]), 'one');
      await index.add(flipBits(query, [20, 50]), 'two');
      expect(await index.findNear(query)).toMatchObject({ id: 'one', distance: 1 });
      await index.add(query, 'zero');
      expect(await index.findNear(query)).toEqual({ simhash: query, id: 'zero', distance: 0 });
    });

    it('keeps the first owner of a simhash: adding it again is harmless, another id is told the owner', async () => {
      const index = new SimhashIndex(store);
      expect(await index.add('00000000ffffffff', 'first')).toBeNull();
      expect(await index.add('00000000ffffffff', 'first')).toBeNull();
      expect(await index.add('00000000ffffffff', 'second')).toBe('first');
      expect(await index.findNear('00000000ffffffff')).toMatchObject({ id: 'first', distance: 0 });
    });

    it('gives one owner to a simhash added by many callers at once', async () => {
      const index = new SimhashIndex(store);
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => index.add('1111222233334444', `id-${i}`)));
      const winners = answers.map((owner, i) => (owner === null ? i : -1)).filter((i) => i >= 0);
      expect(winners).toHaveLength(1);
      expect(new Set(answers.filter((a) => a !== null))).toEqual(new Set([`id-${winners[0]}`]));
    });

    it('finds each of 5,000 indexed simhashes from up to 3 bits away, and nothing for random others', async () => {
      const index = new SimhashIndex(store);
      const random = randomSimhashes(99);
      const indexed = Array.from({ length: 5000 }, () => random.simhash());
      for (let i = 0; i < indexed.length; i += 500) {
        await Promise.all(indexed.slice(i, i + 500).map((simhash, j) => index.add(simhash, `id-${i + j}`)));
      }
      const hits = await Promise.all(
        Array.from({ length: 300 }, async () => {
          const i = random.int(indexed.length);
          const query = random.flip(indexed[i], random.int(4));
          return { expected: `id-${i}`, found: await index.findNear(query), distance: hammingDistance(query, indexed[i]) };
        }),
      );
      for (const { expected, found, distance } of hits) expect(found).toMatchObject({ id: expected, distance });
      const misses = await Promise.all(Array.from({ length: 300 }, () => index.findNear(random.simhash())));
      expect(misses.filter((m) => m !== null)).toEqual([]);
    });

    it('honours other distances: 0 (exact only), 1 and 5, up to the distance and not beyond', async () => {
      const original = 'fedcba9876543210';
      for (const maxDistance of [0, 1, 5]) {
        const index = new SimhashIndex(store, { maxDistance });
        await index.add(original, `d${maxDistance}`);
        const bits = [0, 13, 27, 33, 47, 58, 62];
        expect(await index.findNear(flipBits(original, bits.slice(0, maxDistance)))).toMatchObject({ id: `d${maxDistance}` });
        expect(await index.findNear(flipBits(original, bits.slice(0, maxDistance + 1)))).toBeNull();
      }
    });

    it('keeps indexes of different distances apart (another distance starts empty)', async () => {
      await new SimhashIndex(store, { maxDistance: 3 }).add('fedcba9876543210', 'three');
      expect(await new SimhashIndex(store, { maxDistance: 2 }).findNear('fedcba9876543210')).toBeNull();
      expect(await new SimhashIndex(store, { maxDistance: 3 }).findNear('fedcba9876543210')).toMatchObject({ id: 'three' });
    });

    it('rejects a malformed simhash', async () => {
      const index = new SimhashIndex(store);
      await expect(index.findNear('xyz')).rejects.toThrow(/not a simhash/);
      await expect(index.add('FEDCBA9876543210', 'id')).rejects.toThrow(/not a simhash/);
    });
  });
}

simhashIndexContract('the memory state store', () => new MemoryStateStore({ prefix: 'crawl' }));
simhashIndexContract('the Redis state store', () => new RedisStateStore({ url: REDIS_URL, prefix: uniquePrefix() }));
// A simhash's band buckets are keys of different slots: read and filed one script per slot.
simhashIndexContract('the Redis state store on a cluster', () => new RedisStateStore({ url: REDIS_CLUSTER_URL, prefix: uniquePrefix() }));

describe('SimhashIndex in Redis', () => {
  let redis: Redis;
  let prefix: string;
  let store: RedisStateStore;

  beforeEach(() => {
    redis = new Redis(REDIS_URL);
    prefix = uniquePrefix();
    store = new RedisStateStore({ url: REDIS_URL, prefix });
  });

  afterEach(async () => {
    await store.clear();
    await store.close();
    await redis.quit();
  });

  it('files a simhash under one bucket per band (compact intsets) and its owner in a small hash (a listpack)', async () => {
    const index = new SimhashIndex(store.namespace('near'));
    await index.add('0123456789abcdef', 'a'.repeat(64));
    await index.add('0123ffffffffffff', 'b'.repeat(64)); // shares band 0 and the owner shard
    const keys = (await redis.keys(`${prefix}:*`)).map((k) => k.slice(prefix.length + 1)).sort();
    expect(keys).toEqual([
      'near:4x16:b0:0123',
      'near:4x16:b1:4567',
      'near:4x16:b1:ffff',
      'near:4x16:b2:89ab',
      'near:4x16:b2:ffff',
      'near:4x16:b3:cdef',
      'near:4x16:b3:ffff',
      'near:4x16:o:0123',
    ]);
    expect(await redis.smembers(`${prefix}:near:4x16:b0:0123`)).toEqual(
      [BigInt.asIntN(64, 0x0123456789abcdefn).toString(), BigInt.asIntN(64, 0x0123ffffffffffffn).toString()].sort((a, b) => Number(BigInt(a) - BigInt(b))),
    );
    expect(await redis.object('ENCODING', `${prefix}:near:4x16:b0:0123`)).toBe('intset');
    expect(await redis.object('ENCODING', `${prefix}:near:4x16:o:0123`)).toMatch(/listpack|ziplist/);
    expect(await redis.hget(`${prefix}:near:4x16:o:0123`, String(0x456789abcdefn))).toBe('a'.repeat(64));
  });

  it('is shared by replicas on separate connections', async () => {
    const replica = new RedisStateStore({ url: REDIS_URL, prefix });
    await new SimhashIndex(store).add('0123456789abcdef', 'http://a.test/');
    expect(await new SimhashIndex(replica).findNear('0123456789abcdee')).toMatchObject({ id: 'http://a.test/', distance: 1 });
    await replica.close();
  });
});
