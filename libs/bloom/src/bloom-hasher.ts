import { murmur3x4 } from '@crawler/murmur3';
import { MAX_BLOOM_BITS, type BloomParameters } from './bloom-params';

/** The hasher's name in a filter's layout: stored bits mean something only to the hasher that set them. */
export const BLOOM_HASHER_NAME = 'murmur3x4-edh';

/**
 * The k bit offsets of an item, by enhanced double hashing (Dillinger & Manolios): two 53-bit values X, Y,
 * then offset_i = X + i·Y + (i³ − i)/6 mod m, computed incrementally. X and Y come from four lanes of
 * MurmurHash3_x86_32 over the item's UTF-16LE code units (seeds: seed, and seed xor three constants):
 * X = h0·2²¹ + h1 >>> 11, Y = h2·2²¹ + h3 >>> 11, so the reduction mod m (≤ 2³²) has no visible bias.
 *
 * Why not a cryptographic hash: a node:crypto SHA-256 per URL (a Hash object and a digest Buffer each)
 * cost ~2 µs, the URL filter's largest single cost; these four lanes cost ~0.2 µs. Nobody chooses our URLs
 * to collide in our filter, and a collision costs one false positive, which the filter's rate allows for.
 *
 * The offsets ARE the persisted format of a shared filter (bits in Redis that must mean the same to every
 * replica, across restarts and upgrades): changing anything below, or murmur3x4 in `@crawler/murmur3`, changes
 * BLOOM_HASHER_NAME too, and a filter written under another name is refused at start (url-seen's layout check).
 */
export class BloomHasher {
  readonly bits: number;
  readonly hashes: number;
  private readonly seeds: [number, number, number, number];

  constructor(params: BloomParameters, seed = 0) {
    const { bits, hashes } = params;
    if (!Number.isInteger(bits) || bits < 1 || bits > MAX_BLOOM_BITS) {
      throw new RangeError(`Bloom filter bits must be an integer in [1, 2^32], got ${bits}`);
    }
    if (!Number.isInteger(hashes) || hashes < 1) {
      throw new RangeError(`Bloom filter hashes must be an integer ≥ 1, got ${hashes}`);
    }
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
      throw new RangeError(`Bloom filter seed must be an unsigned 32-bit integer, got ${seed}`);
    }
    this.bits = bits;
    this.hashes = hashes;
    this.seeds = [seed | 0, (seed ^ 0x9e3779b9) | 0, (seed ^ 0x85ebca6b) | 0, (seed ^ 0xc2b2ae35) | 0];
  }

  /** k offsets in [0, bits), in probe order; two may coincide (each costs one bit either way). */
  offsets(item: string): number[] {
    return this.offsetsOf(murmur3x4(item, this.seeds));
  }

  /**
   * The item's shard of `shards` and its k offsets in that shard (each shard `bits` bits), from one hash.
   * The shard is the 22 bits the offsets leave unused (the low 11 of h1 and of h3) modulo `shards`, so it is
   * independent of the offsets; with one shard, the offsets are those of `offsets`.
   */
  place(item: string, shards: number): { shard: number; offsets: number[] } {
    const lanes = murmur3x4(item, this.seeds);
    const shard = (((lanes[1] & 0x7ff) << 11) | (lanes[3] & 0x7ff)) % shards;
    return { shard, offsets: this.offsetsOf(lanes) };
  }

  private offsetsOf([h0, h1, h2, h3]: [number, number, number, number]): number[] {
    const m = this.bits;
    // Below 2^53, so exact in doubles; from here on every value is < 2^32, so sums stay exact.
    let x = (h0 * 2097152 + (h1 >>> 11)) % m;
    let y = (h2 * 2097152 + (h3 >>> 11)) % m;
    const out = [x];
    for (let i = 1; i < this.hashes; i++) {
      x = (x + y) % m;
      y = (y + i) % m;
      out.push(x);
    }
    return out;
  }
}
