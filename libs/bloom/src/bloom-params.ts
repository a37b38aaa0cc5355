/** Size of a Bloom filter: m bits probed by k hash functions. */
export interface BloomParameters {
  bits: number;
  hashes: number;
}

/** A Redis string (the shared filter's bitmap) holds at most 512 MiB: offsets 0 … 2^32 − 1. */
export const MAX_BLOOM_BITS = 2 ** 32;

/**
 * The smallest filter that holds `expectedItems` at `falsePositiveRate`: m = ⌈−n·ln p / (ln 2)²⌉ (the
 * formula of bloom-filters' `optimalFilterSize`, which its package entry point does not export), and the
 * integer k next to m/n·ln 2 that gives the lower false-positive rate (bloom-filters always rounds up,
 * which for p = 0.05 picks 5 where 4 is better).
 */
export function bloomParameters(expectedItems: number, falsePositiveRate: number): BloomParameters {
  if (!Number.isFinite(expectedItems) || expectedItems < 1) {
    throw new RangeError(`Bloom filter expected items must be a number ≥ 1, got ${expectedItems}`);
  }
  if (!(falsePositiveRate > 0 && falsePositiveRate < 1)) {
    throw new RangeError(
      `Bloom filter false-positive rate must be between 0 and 1 (exclusive), got ${falsePositiveRate}`,
    );
  }
  const bits = Math.ceil((-expectedItems * Math.log(falsePositiveRate)) / Math.LN2 ** 2);
  if (bits > MAX_BLOOM_BITS) {
    throw new RangeError(
      `a Bloom filter for ${expectedItems} items at a false-positive rate of ${falsePositiveRate} needs ` +
        `${bits} bits, more than the 2^32 a Redis bitmap holds: lower the expected items or raise the rate`,
    );
  }
  const ideal = (bits / expectedItems) * Math.LN2;
  const candidates = [Math.floor(ideal), Math.ceil(ideal)].filter((k) => k >= 1);
  const rate = (k: number) => (1 - Math.exp((-k * expectedItems) / bits)) ** k;
  const hashes = candidates.reduce((best, k) => (rate(k) < rate(best) ? k : best));
  return { bits, hashes };
}
