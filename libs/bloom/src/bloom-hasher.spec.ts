import { BloomHasher } from './bloom-hasher';
import { estimatedFalsePositiveRate, estimatedItems } from './bloom-estimates';
import { bloomParameters } from './bloom-params';

/** Deterministic pseudo-random URL-like items (xorshift32), so the statistics below never flake. */
function randomItems(count: number, seed: number, prefix: string): string[] {
  let s = seed;
  const next = () => ((s ^= s << 13), (s ^= s >>> 17), (s ^= s << 5), s >>> 0);
  return Array.from({ length: count }, () => `${prefix}${next().toString(36)}/${next().toString(36)}`);
}

describe('BloomHasher', () => {
  const params = { bits: 9_585_059, hashes: 7 };

  it('gives k integer offsets in [0, bits)', () => {
    const hasher = new BloomHasher(params);
    for (const item of ['', 'https://example.com/', 'ünïcødé ✓', 'x'.repeat(10_000)]) {
      const offsets = hasher.offsets(item);
      expect(offsets).toHaveLength(7);
      for (const o of offsets) {
        expect(Number.isInteger(o)).toBe(true);
        expect(o).toBeGreaterThanOrEqual(0);
        expect(o).toBeLessThan(params.bits);
      }
    }
  });

  it('places an item in one shard, spread evenly, with the offsets it has unsharded', () => {
    const hasher = new BloomHasher(params);
    const items = randomItems(23_000, 2463534242, 'https://shard.example/');
    const perShard = new Array<number>(23).fill(0);
    for (const item of items) {
      const { shard, offsets } = hasher.place(item, 23);
      expect(offsets).toEqual(hasher.offsets(item));
      perShard[shard]++;
    }
    for (const count of perShard) expect(Math.abs(count - 1000)).toBeLessThan(130); // ±4σ of a binomial
    expect(hasher.place('https://example.com/', 1).shard).toBe(0);
  });

  it('picks the shard independently of the offsets: within a shard, the bits stay uniform', () => {
    const hasher = new BloomHasher({ bits: 1000, hashes: 1 });
    const firstOffsets = new Array<number>(10).fill(0);
    for (const item of randomItems(50_000, 88172645, 'https://shard.example/')) {
      const { shard, offsets } = hasher.place(item, 16);
      if (shard === 3) firstOffsets[Math.floor(offsets[0] / 100)]++;
    }
    const total = firstOffsets.reduce((a, b) => a + b, 0);
    for (const count of firstOffsets) expect(Math.abs(count - total / 10)).toBeLessThan(4 * Math.sqrt(total / 10));
  });

  it('is deterministic: same seed, same offsets; other seed, other offsets', () => {
    const a = new BloomHasher(params, 7).offsets('https://example.com/a');
    expect(new BloomHasher(params, 7).offsets('https://example.com/a')).toEqual(a);
    expect(new BloomHasher(params, 8).offsets('https://example.com/a')).not.toEqual(a);
    expect(new BloomHasher(params, 7).offsets('https://example.com/b')).not.toEqual(a);
  });

  it('pins the persisted format: these offsets must never change (stored filters depend on them)', () => {
    expect(new BloomHasher(params).offsets('https://example.com/')).toEqual(GOLDEN_DEFAULT_SEED);
    expect(new BloomHasher({ bits: 2 ** 32, hashes: 3 }, 42).offsets('héllo')).toEqual(GOLDEN_SEED_42);
    expect(new BloomHasher({ bits: 1_000_003, hashes: 4 }, 7).offsets('a😀b')).toEqual(GOLDEN_ASTRAL);
  });

  it('covers the whole range of a 2^32-bit filter', () => {
    const hasher = new BloomHasher({ bits: 2 ** 32, hashes: 4 });
    const offsets = randomItems(1000, 1, 'u').flatMap((item) => hasher.offsets(item));
    expect(Math.max(...offsets)).toBeGreaterThan(0.99 * 2 ** 32);
    expect(Math.max(...offsets)).toBeLessThan(2 ** 32);
    expect(Math.min(...offsets)).toBeLessThan(0.01 * 2 ** 32);
  });

  it('handles degenerate sizes', () => {
    expect(new BloomHasher({ bits: 1, hashes: 3 }).offsets('x')).toEqual([0, 0, 0]);
  });

  it('rejects invalid parameters', () => {
    expect(() => new BloomHasher({ bits: 0, hashes: 7 })).toThrow(/bits/);
    expect(() => new BloomHasher({ bits: 2 ** 32 + 1, hashes: 7 })).toThrow(/bits/);
    expect(() => new BloomHasher({ bits: 1000, hashes: 0 })).toThrow(/hashes/);
    expect(() => new BloomHasher({ bits: 1000, hashes: 2.5 })).toThrow(/hashes/);
    expect(() => new BloomHasher(params, -1)).toThrow(/seed/);
    expect(() => new BloomHasher(params, 2 ** 32)).toThrow(/seed/);
  });

  describe('as a filter: 100k items at p = 0.01 in an in-memory bitset', () => {
    const n = 100_000;
    const { bits, hashes } = bloomParameters(n, 0.01);
    const hasher = new BloomHasher({ bits, hashes }, 1234);
    const bitset = new Uint8Array(Math.ceil(bits / 8));
    const has = (o: number) => (bitset[o >>> 3] & (1 << (o & 7))) !== 0;
    for (const item of randomItems(n, 2463534242, 'https://in.example/')) {
      for (const o of hasher.offsets(item)) bitset[o >>> 3] |= 1 << (o & 7);
    }
    const others = randomItems(n, 88172645, 'https://out.example/');
    const falsePositives = others.filter((item) => hasher.offsets(item).every(has)).length;
    const bitsSet = bitset.reduce((sum, byte) => sum + popcount(byte), 0);

    it('has an observed false-positive rate below 0.015 on 100k other items', () => {
      expect(falsePositives / n).toBeLessThan(0.015);
      expect(falsePositives / n).toBeGreaterThan(0.005); // and it is a Bloom filter, not a set
    });

    it('lets the estimates recover the truth from the population count', () => {
      expect(Math.abs(estimatedItems(bitsSet, bits, hashes) - n) / n).toBeLessThan(0.02);
      expect(estimatedFalsePositiveRate(bitsSet, bits, hashes)).toBeCloseTo(0.01, 3);
      expect(Math.abs(estimatedFalsePositiveRate(bitsSet, bits, hashes) - falsePositives / n)).toBeLessThan(0.002);
    });
  });
});

function popcount(byte: number): number {
  let count = 0;
  for (let b = byte; b; b &= b - 1) count++;
  return count;
}

// Cross-checked against an independent Python computation: a byte-wise MurmurHash3_x86_32 (checked against
// the reference's vectors) of the item's UTF-16LE bytes under seed, seed ^ 0x9e3779b9, seed ^ 0x85ebca6b and
// seed ^ 0xc2b2ae35; X = h0·2^21 + (h1 >> 11), Y = h2·2^21 + (h3 >> 11); then the closed form
// (X + i·Y + (i³ − i)/6) mod m.
const GOLDEN_DEFAULT_SEED = [8561146, 70867, 1165648, 2260431, 3355217, 4450007, 5544802];
const GOLDEN_SEED_42 = [1442204732, 3674833900, 1612495773];
const GOLDEN_ASTRAL = [399170, 49438, 699710, 349981];
