import { murmur3x4 } from '@crawler/murmur3';

const SEEDS: [number, number, number, number] = [0x2545f491, 0x6c8e9cf5, 0x1b873593, 0x5bd1e995];

/**
 * The URLs a process met lately, at most `limit`, forgotten oldest first, by 53-bit fingerprints in two
 * generations of open-addressing tables (the older is dropped when the newer fills): ~16 bytes a URL, where
 * a Set of the strings took ~100. Two URLs share a fingerprint with odds of about `limit` in 2^53 (1e-10
 * at a million): far below a Bloom filter's false positives, and the same standard as exact URL-seen's
 * 64-bit fingerprints.
 */
export class RecentUrls {
  private current: Float64Array;
  private before: Float64Array;
  private count = 0;
  private readonly perGeneration: number;
  private readonly mask: number;

  constructor(limit: number) {
    this.perGeneration = Math.max(1, Math.ceil(limit / 2));
    // At most half full: short probe runs.
    const slots = 2 ** Math.ceil(Math.log2(2 * this.perGeneration));
    this.mask = slots - 1;
    this.current = new Float64Array(limit > 0 ? slots : 0);
    this.before = new Float64Array(limit > 0 ? slots : 0);
  }

  has(url: string): boolean {
    if (this.current.length === 0) return false;
    const [fp, slot] = fingerprint(url, this.mask);
    return probe(this.current, fp, slot, this.mask) < 0 || probe(this.before, fp, slot, this.mask) < 0;
  }

  /** Remembers `url`; answers false when it was remembered already. */
  add(url: string): boolean {
    if (this.current.length === 0) return true;
    const [fp, slot] = fingerprint(url, this.mask);
    const at = probe(this.current, fp, slot, this.mask);
    if (at < 0) return false;
    this.current[at] = fp;
    if (++this.count >= this.perGeneration) {
      const older = this.before;
      this.before = this.current;
      this.current = older.fill(0);
      this.count = 0;
    }
    return true;
  }
}

/** The fingerprint (never 0: 0 marks an empty slot) and its first slot. */
function fingerprint(url: string, mask: number): [number, number] {
  const [a, b, c] = murmur3x4(url, SEEDS);
  return [(a & 0x1fffff) * 4294967296 + b || 1, c & mask];
}

/** Where `fp` is: the negative of its slot + 1 when found, else the empty slot to put it in. */
function probe(table: Float64Array, fp: number, slot: number, mask: number): number {
  for (let i = slot; ; i = (i + 1) & mask) {
    const v = table[i];
    if (v === fp) return -(i + 1);
    if (v === 0) return i;
  }
}
