/**
 * The structure behind URL-seen, chosen by `seen.mode`: a Bloom filter (fixed memory, rare false
 * positives) or an exact set of 64-bit URL fingerprints. Both keep their state in the state store (Redis in
 * the distributed shape: shared by every replica, surviving restarts) and mark a URL seen in the same
 * atomic step that tells whether it already was.
 */
export interface SeenSet {
  /**
   * What the stored state means (structure and sizes). Every replica, before and after a restart, must
   * agree on it: the same bits under other parameters mean other URLs.
   */
  readonly layout: string;
  /** Takes `recorded`, another layout, if it is an older naming of the same structure; answers whether it did. */
  adopt?(recorded: string): boolean;
  /** For each URL (distinct), marks it seen and answers whether it already was: atomic per URL. */
  testAndAdd(urls: string[]): Promise<boolean[]>;
  stats(): Promise<SeenStats>;
}

export interface BloomSeenStats {
  mode: 'bloom';
  /** Bitmaps the filter is split into (by URL hash), each its own key: 1 unless it needs more than 2^32 bits or runs on a cluster. */
  shards: number;
  /** Size of the filter (m, all shards) and hashes per URL (k), from `seen.expectedUrls` and `seen.falsePositiveRate`. */
  bits: number;
  hashes: number;
  /** Bits set (X), by BITCOUNT of every shard. */
  bitsSet: number;
  /** X / m. */
  fillRatio: number;
  /** URLs in the filter, estimated from the fill: −(m/k)·ln(1 − X/m) summed over shards; Infinity once one is saturated. */
  urls: number;
  /** Odds that a URL never seen is taken for seen (and lost), now: (X/m)^k, averaged over shards. */
  falsePositiveRate: number;
  /** Memory of the bitmaps once fully written: m / 8. */
  bytes: number;
}

export interface ExactSeenStats {
  mode: 'exact';
  /** Fingerprints stored (the set's size), counted as they are added. */
  urls: number;
  /** Sets the fingerprints are spread over. */
  buckets: number;
  /** Odds that a URL never seen has the fingerprint of one stored: urls / 2^64. */
  falsePositiveRate: number;
}

export type SeenStats = BloomSeenStats | ExactSeenStats;
