import type { StateStore } from '@crawler/state';
import { popcount32, simhashHalves, toHex } from './simhash';

export interface SimhashIndexOptions {
  /** Simhashes at most this many bits apart are near each other (0…15). @defaultValue 3 */
  maxDistance?: number;
}

export interface NearMatch {
  /** The indexed simhash nearest to the one looked up. */
  simhash: string;
  /** Bits in which they differ, ≤ maxDistance. */
  distance: number;
  /** What it was indexed for (see `add`). */
  id: string;
}

/**
 * Simhashes, found again by Hamming distance in a few lookups however many are indexed (Manku et al.'s
 * banded tables, one "table" per band in a shared state store).
 *
 * Pigeonhole: cut 64 bits into d + 1 bands of ⌊64 / (d + 1)⌋ bits (4 × 16 for d = 3; leftover bits belong
 * to no band). Two simhashes at most d bits apart agree on at least one whole band, so each simhash is filed
 * under each of its band values, and a lookup reads the d + 1 buckets of its own band values and measures
 * the distance to every candidate found there. The buckets are read in one step and a simhash is filed in
 * all of them in one step (with the Redis driver, one command each). With n simhashes a bucket holds about
 * n / 2^bits of them: ≈ 15 for a million at 16 bits, so a lookup reads ≈ 60 numbers.
 *
 * Keys, under a namespace named by the layout (`4x16`; another distance is another, empty, index):
 * - `b<band>:<band value, hex>`: a set of simhashes, each as its signed 64-bit decimal value, so Redis
 *   keeps a small bucket as an intset (8 bytes a member; 16-hex strings would make it a hash table in
 *   Redis < 7.2). A bucket turns into a hash table past `set-max-intset-entries` (512): ≈ 30 million
 *   simhashes at 16-bit bands.
 * - `o:<first 16 bits, hex>`: who owns each simhash: a hash from its other 48 bits (decimal) to the id, so
 *   the 65,536 small hashes stay listpacks as long as ids are ≤ 64 bytes (`hash-max-listpack-value`) and a
 *   shard has ≤ `hash-max-listpack-entries` fields (128 by default: ≈ 8 million simhashes).
 * Measured with a million simhashes and 64-hex ids (bench/content-seen.ts, Redis 7.0): ≈ 160 B of keys per
 * simhash (MEMORY USAGE: 68 B buckets, 92 B owners), ≈ 175 B of used_memory.
 *
 * Concurrency: `add` first claims the simhash in its owner hash (atomic set-if-absent), then files it in its
 * buckets, so whoever finds a simhash in a bucket also finds its owner. Two callers adding the same simhash
 * at once: one owns it, the other is told who. Two callers adding different simhashes near each other at
 * once (both looked up before either was filed): both are indexed — the race costs a near duplicate kept,
 * never a page lost, and the next lookup finds the nearer of the two.
 */
export class SimhashIndex {
  readonly maxDistance: number;
  readonly bands: number;
  readonly bandBits: number;
  private readonly store: StateStore;

  constructor(store: StateStore, options: SimhashIndexOptions = {}) {
    const maxDistance = options.maxDistance ?? 3;
    if (!Number.isInteger(maxDistance) || maxDistance < 0 || maxDistance > 15) {
      throw new RangeError(`simhash index maxDistance must be an integer in [0, 15], got ${maxDistance}`);
    }
    this.maxDistance = maxDistance;
    this.bands = maxDistance + 1;
    this.bandBits = Math.floor(64 / this.bands);
    this.store = store.namespace(`${this.bands}x${this.bandBits}`);
  }

  /** The indexed simhash nearest to `simhash` within maxDistance, with its owner; null when there is none. */
  async findNear(simhash: string): Promise<NearMatch | null> {
    const [hi, lo] = simhashHalves(simhash);
    const buckets = await this.store.setMembersMany(this.bucketKeys(hi, lo));
    const near = new Map<string, { hi: number; lo: number; distance: number }>();
    for (const members of buckets) {
      for (const member of members) {
        if (near.has(member)) continue;
        const [mhi, mlo] = fromMember(member);
        const distance = popcount32(hi ^ mhi) + popcount32(lo ^ mlo);
        if (distance <= this.maxDistance) near.set(member, { hi: mhi, lo: mlo, distance });
      }
    }
    // Nearest first; among equals the smallest value, so every replica answers alike.
    const ranked = [...near.values()].sort((a, b) => a.distance - b.distance || a.hi - b.hi || a.lo - b.lo);
    for (const candidate of ranked) {
      const id = await this.store.hashGet(ownerKey(candidate.hi), ownerField(candidate.hi, candidate.lo));
      // Always there (claimed before filed) unless someone deleted it: then the next candidate.
      if (id !== null) return { simhash: toHex(candidate.hi, candidate.lo), distance: candidate.distance, id };
    }
    return null;
  }

  /**
   * Indexes `simhash` for `id` (what a match should answer: a URL, a content hash; ≤ 64 bytes keeps Redis
   * compact). Answers null when `id` owns it now (newly, or again: adding twice is harmless), else the id
   * that already owns this very simhash, which stays its owner.
   */
  async add(simhash: string, id: string): Promise<string | null> {
    const [hi, lo] = simhashHalves(simhash);
    const owner = await this.store.hashSetIfAbsent(ownerKey(hi), ownerField(hi, lo), id);
    if (owner !== null && owner !== id) return owner;
    const member = toMember(hi, lo);
    await this.store.setAddMany(this.bucketKeys(hi, lo).map((key): [string, string] => [key, member]));
    return null;
  }

  /** `b<band>:<value>` for each band, the value in hex (⌈bandBits / 4⌉ digits). */
  private bucketKeys(hi: number, lo: number): string[] {
    if (this.bands === 1) return [`b0:${toHex(hi, lo)}`]; // distance 0: one band, the whole simhash
    const keys: string[] = [];
    const digits = Math.ceil(this.bandBits / 4);
    for (let band = 0; band < this.bands; band++) {
      keys.push(
        `b${band}:${bitsAt(hi, lo, band * this.bandBits, this.bandBits)
          .toString(16)
          .padStart(digits, '0')}`,
      );
    }
    return keys;
  }
}

/** `width` (≤ 32) bits of the simhash from bit `start` (0 = most significant), as an unsigned number: a band's value. */
export function bitsAt(hi: number, lo: number, start: number, width: number): number {
  let value = 0;
  for (let bit = start; bit < start + width; bit++) {
    const set = bit < 32 ? (hi >>> (31 - bit)) & 1 : (lo >>> (63 - bit)) & 1;
    value = value * 2 + set;
  }
  return value;
}

function ownerKey(hi: number): string {
  return `o:${(hi >>> 16).toString(16).padStart(4, '0')}`;
}

/** The low 48 bits, in decimal (< 2^48, so exact in a double; Redis stores it as an integer). */
function ownerField(hi: number, lo: number): string {
  return String((hi & 0xffff) * 2 ** 32 + lo);
}

/** A simhash as the signed 64-bit integer with its bits, in decimal: a Redis intset member. */
function toMember(hi: number, lo: number): string {
  return BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo)).toString();
}

function fromMember(member: string): [hi: number, lo: number] {
  const value = BigInt.asUintN(64, BigInt(member));
  return [Number(value >> 32n), Number(value & 0xffffffffn)];
}
