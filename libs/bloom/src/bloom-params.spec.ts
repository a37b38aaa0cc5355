import { optimalFilterSize } from 'bloom-filters/dist/formulas';
import { bloomParameters, MAX_BLOOM_BITS, shardedBloomParameters } from './bloom-params';

describe('bloomParameters', () => {
  it('sizes 1 M items at 1 % to ≈ 9.59 M bits and 7 hashes', () => {
    expect(bloomParameters(1e6, 0.01)).toEqual({ bits: 9_585_059, hashes: 7 });
  });

  it("agrees with bloom-filters' optimalFilterSize", () => {
    for (const [n, p] of [
      [1, 0.5],
      [1000, 0.01],
      [1e6, 0.001],
      [123_456, 0.0314],
      [1e8, 0.01],
    ]) {
      expect(bloomParameters(n, p).bits).toBe(optimalFilterSize(n, p));
    }
  });

  it('picks the number of hashes with the lowest false-positive rate for its size', () => {
    for (const [n, p] of [
      [1e6, 0.05],
      [1e6, 0.01],
      [1e6, 0.001],
      [5000, 0.3],
      [10, 0.2],
    ]) {
      const { bits, hashes } = bloomParameters(n, p);
      const rate = (k: number) => (1 - Math.exp((-k * n) / bits)) ** k;
      for (let k = 1; k <= 40; k++) expect(rate(hashes)).toBeLessThanOrEqual(rate(k));
      expect(rate(hashes)).toBeLessThanOrEqual(p * 1.03);
    }
    expect(bloomParameters(1e6, 0.05).hashes).toBe(4); // where rounding up (5) would be worse
  });

  it('rejects invalid inputs with a clear error', () => {
    for (const n of [0, -5, 0.5, NaN, Infinity]) expect(() => bloomParameters(n, 0.01)).toThrow(/expected items/);
    for (const p of [0, 1, -0.1, 1.5, NaN]) expect(() => bloomParameters(1000, p)).toThrow(/false-positive rate/);
  });

  it('refuses filters larger than a Redis bitmap (2^32 bits)', () => {
    expect(() => bloomParameters(1e9, 1e-3)).toThrow(/more than the 2\^32 a Redis bitmap holds: split it into shards/);
    const largest = bloomParameters(448_000_000, 0.01); // ≈ 4.29e9 bits, just under the cap
    expect(largest.bits).toBeLessThanOrEqual(MAX_BLOOM_BITS);
  });
});

describe('shardedBloomParameters', () => {
  it('is the one filter of bloomParameters while it fits one bitmap', () => {
    for (const [n, p] of [
      [1e6, 0.01],
      [448_000_000, 0.01],
      [10_000, 0.001],
    ]) {
      expect(shardedBloomParameters(n, p)).toEqual({ ...bloomParameters(n, p), shards: 1, totalBits: bloomParameters(n, p).bits });
    }
  });

  it('splits 10^10 URLs at 1 % into the fewest shards under 2^32 bits each, with the same k', () => {
    const sharded = shardedBloomParameters(1e10, 0.01);
    const totalBits = Math.ceil((-1e10 * Math.log(0.01)) / Math.LN2 ** 2); // ≈ 9.59e10: 12 GB
    expect(sharded.shards).toBe(Math.ceil(totalBits / MAX_BLOOM_BITS));
    expect(sharded.shards).toBe(23);
    expect(sharded.bits).toBeLessThanOrEqual(MAX_BLOOM_BITS);
    expect(sharded.totalBits).toBeGreaterThanOrEqual(totalBits);
    expect(sharded.totalBits - totalBits).toBeLessThan(sharded.shards);
    expect(sharded.hashes).toBe(7);
  });

  it('keeps the false-positive rate: each shard holds n/s items in m/s bits', () => {
    for (const [n, p, min] of [
      [1e10, 0.01, 1],
      [1e6, 0.001, 16],
      [5000, 0.05, 16],
    ]) {
      const { shards, bits, hashes } = shardedBloomParameters(n, p, min);
      const perShard = n / shards;
      expect((1 - Math.exp((-hashes * perShard) / bits)) ** hashes).toBeLessThanOrEqual(p * 1.03);
    }
  });

  it('gives at least the shards asked for (a cluster spreads them over its masters)', () => {
    expect(shardedBloomParameters(10_000, 0.01, 16).shards).toBe(16);
    expect(shardedBloomParameters(1e10, 0.01, 16).shards).toBe(23);
    expect(() => shardedBloomParameters(1000, 0.01, 0)).toThrow(/shards/);
  });
});
