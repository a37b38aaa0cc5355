/** Size of a Bloom filter: m bits probed by k hash functions. */
export interface BloomParameters {
  bits: number;
  hashes: number;
}

/**
 * A Bloom filter split into shards by item hash: each item's k bits are all in its one shard, so each shard
 * is a filter of its own (a Redis string: one key, one slot of a cluster) of `bits` bits and the same k.
 */
export interface ShardedBloomParameters extends BloomParameters {
  /** Shards, each of `bits` bits. */
  shards: number;
  /** All shards' bits together: shards × bits. */
  totalBits: number;
}

/** A Redis string (the shared filter's bitmap) holds at most 512 MiB: offsets 0 … 2^32 − 1. */
export const MAX_BLOOM_BITS = 2 ** 32;

/**
 * The smallest filter that holds `expectedItems` at `falsePositiveRate`: m = ⌈−n·ln p / (ln 2)²⌉ (the
 * formula of bloom-filters' `optimalFilterSize`, which its package entry point does not export), and the
 * integer k next to m/n·ln 2 that gives the lower false-positive rate (bloom-filters always rounds up,
 * which for p = 0.05 picks 5 where 4 is better). One bitmap: refused past 2^32 bits
 * (`shardedBloomParameters` splits a larger one).
 */
export function bloomParameters(expectedItems: number, falsePositiveRate: number): BloomParameters {
  const bits = filterBits(expectedItems, falsePositiveRate);
  if (bits > MAX_BLOOM_BITS) {
    throw new RangeError(
      `a Bloom filter for ${expectedItems} items at a false-positive rate of ${falsePositiveRate} needs ` +
        `${bits} bits, more than the 2^32 a Redis bitmap holds: split it into shards`,
    );
  }
  return { bits, hashes: bestHashes(bits, expectedItems) };
}

/**
 * The filter of `bloomParameters`, split into the fewest shards (at least `minShards`) that keep each under
 * 2^32 bits: per shard m/s bits (rounded up) for n/s items, so the same k and the same false-positive rate,
 * as items spread evenly over shards by their hash. One shard when it fits: the unsharded filter itself.
 */
export function shardedBloomParameters(expectedItems: number, falsePositiveRate: number, minShards = 1): ShardedBloomParameters {
  if (!Number.isInteger(minShards) || minShards < 1) throw new RangeError(`Bloom filter shards must be an integer ≥ 1, got ${minShards}`);
  const total = filterBits(expectedItems, falsePositiveRate);
  const shards = Math.max(minShards, Math.ceil(total / MAX_BLOOM_BITS));
  const bits = Math.ceil(total / shards);
  return { shards, bits, hashes: bestHashes(bits, expectedItems / shards), totalBits: bits * shards };
}

/** m = ⌈−n·ln p / (ln 2)²⌉. */
function filterBits(expectedItems: number, falsePositiveRate: number): number {
  if (!Number.isFinite(expectedItems) || expectedItems < 1) {
    throw new RangeError(`Bloom filter expected items must be a number ≥ 1, got ${expectedItems}`);
  }
  if (!(falsePositiveRate > 0 && falsePositiveRate < 1)) {
    throw new RangeError(`Bloom filter false-positive rate must be between 0 and 1 (exclusive), got ${falsePositiveRate}`);
  }
  return Math.ceil((-expectedItems * Math.log(falsePositiveRate)) / Math.LN2 ** 2);
}

/** Of the integers next to m/n·ln 2, the k with the lower false-positive rate. */
function bestHashes(bits: number, items: number): number {
  const ideal = (bits / items) * Math.LN2;
  const candidates = [Math.floor(ideal), Math.ceil(ideal)].filter((k) => k >= 1);
  const rate = (k: number) => (1 - Math.exp((-k * items) / bits)) ** k;
  return candidates.reduce((best, k) => (rate(k) < rate(best) ? k : best));
}
