import { fmix32, mixBlock, mixState } from './murmur3-mix';

/**
 * MurmurHash3_x86_32 of the UTF-16LE bytes of `text` (a 4-byte block is two code units, low unit first),
 * under four seeds at once, as unsigned 32-bit integers: four independent lanes for the price of one pass
 * over the text, with no encoding step.
 *
 * Its outputs ARE a persisted format (the offsets of a shared Bloom filter's bits in Redis): changing
 * anything here or in murmur3-mix.ts changes every stored filter's meaning. The spec pins it.
 */
export function murmur3x4(text: string, seeds: readonly [number, number, number, number]): [number, number, number, number] {
  let [a, b, c, d] = seeds;
  const n = text.length;
  const even = n & ~1;
  for (let i = 0; i < even; i += 2) {
    const k = mixBlock(text.charCodeAt(i) | (text.charCodeAt(i + 1) << 16));
    a = mixState(a, k);
    b = mixState(b, k);
    c = mixState(c, k);
    d = mixState(d, k);
  }
  if (n !== even) {
    // The 2-byte tail: one code unit.
    const k = mixBlock(text.charCodeAt(even));
    a ^= k;
    b ^= k;
    c ^= k;
    d ^= k;
  }
  const bytes = 2 * n;
  return [fmix32(a ^ bytes) >>> 0, fmix32(b ^ bytes) >>> 0, fmix32(c ^ bytes) >>> 0, fmix32(d ^ bytes) >>> 0];
}
