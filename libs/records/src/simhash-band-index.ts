import { fmix32 } from '@crawler/murmur3';
import { simhashHalves, toHex } from '@crawler/simhash';
import { SimhashLayout, simhashBuckets } from './simhash-bands';

const NONE = -1;
/** Buckets per band at most (2^16): a band of more bits is hashed into them. */
const MAX_BUCKET_BITS = 16;

/**
 * The near-duplicate index of one layout (see simhash-bands.ts) in typed arrays: each simhash is 8 bytes and
 * one link per band (4 bytes), chained from a fixed table of bucket heads per band — about 24 bytes a page at
 * the default distance, where a map of sets of strings took hundreds. A band wider than 16 bits shares its
 * buckets between values (hashed): a lookup then also reads simhashes that agree on no band, which the
 * distance check drops, so the answers are those of the exact buckets.
 */
export class SimhashBandIndex {
  private readonly bucketBits: number;
  private readonly heads: Int32Array;
  private his = new Uint32Array(1024);
  private los = new Uint32Array(1024);
  /** Per simhash and band, the simhash filed before it in the same bucket. */
  private next: Int32Array;
  private count = 0;

  constructor(private readonly layout: SimhashLayout) {
    this.bucketBits = Math.min(MAX_BUCKET_BITS, layout.bandBits);
    this.heads = new Int32Array(layout.bands << this.bucketBits).fill(NONE);
    this.next = new Int32Array(1024 * layout.bands);
  }

  add(simhash: string): void {
    if (this.count === this.his.length) this.grow();
    const entry = this.count++;
    [this.his[entry], this.los[entry]] = simhashHalves(simhash);
    simhashBuckets(this.layout, simhash).forEach(([, value], band) => {
      const head = this.head(band, value);
      this.next[entry * this.layout.bands + band] = this.heads[head];
      this.heads[head] = entry;
    });
  }

  /** The simhashes filed in any of the simhash's buckets (each once). */
  candidates(simhash: string): { simhash: string }[] {
    const found = new Set<number>();
    simhashBuckets(this.layout, simhash).forEach(([, value], band) => {
      for (let entry = this.heads[this.head(band, value)]; entry !== NONE; entry = this.next[entry * this.layout.bands + band]) found.add(entry);
    });
    return [...found].map((entry) => ({ simhash: toHex(this.his[entry], this.los[entry]) }));
  }

  private head(band: number, value: number): number {
    const bucket = this.layout.bandBits <= MAX_BUCKET_BITS ? value & ((1 << this.bucketBits) - 1) : fmix32(value >>> 0) >>> (32 - this.bucketBits);
    return (band << this.bucketBits) | bucket;
  }

  private grow(): void {
    const his = new Uint32Array(this.his.length * 2);
    const los = new Uint32Array(this.los.length * 2);
    const next = new Int32Array(this.next.length * 2);
    his.set(this.his);
    los.set(this.los);
    next.set(this.next);
    [this.his, this.los, this.next] = [his, los, next];
  }
}
