import { fmix32, mixBlock, mixState } from './murmur3-mix';

/**
 * MurmurHash3 x86_32 (Austin Appleby's reference `MurmurHash3_x86_32`) over the UTF-8 bytes of a string, or
 * over bytes, as an unsigned 32-bit integer.
 *
 * Its outputs ARE a shared format (the hash ring's points: every downloader and every frontier replica must
 * put a host on the same point, in any process, on any Node version). So the hash is written out here, over
 * UTF-8 bytes we encode ourselves — nothing depends on a library's or an engine's string hashing — and the
 * spec pins it to the reference test vectors. Changing anything here or in murmur3-mix.ts reassigns every host.
 */
export function murmur3_32(input: string | Uint8Array, seed = 0): number {
  if (typeof input === 'string') {
    const length = encodeUtf8(input);
    return murmur3Bytes(scratch, length, seed);
  }
  return murmur3Bytes(input, input.length, seed);
}

/** Reused by every string hash (hashing is synchronous, so nothing can interleave); grown on demand. */
let scratch = new Uint8Array(256);

/**
 * Writes `text` as UTF-8 into `scratch` and answers the byte count. A lone surrogate becomes U+FFFD, exactly
 * as `TextEncoder` and `Buffer.from(text, 'utf8')` do, so a hash never depends on which encoder a caller used.
 */
function encodeUtf8(text: string): number {
  const units = text.length;
  if (scratch.length < units * 3) scratch = new Uint8Array(Math.max(units * 3, scratch.length * 2));
  const out = scratch;
  let n = 0;
  for (let i = 0; i < units; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x80) {
      out[n++] = c;
    } else if (c < 0x800) {
      out[n++] = 0xc0 | (c >> 6);
      out[n++] = 0x80 | (c & 0x3f);
    } else if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < units ? text.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        const cp = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        i++;
        out[n++] = 0xf0 | (cp >> 18);
        out[n++] = 0x80 | ((cp >> 12) & 0x3f);
        out[n++] = 0x80 | ((cp >> 6) & 0x3f);
        out[n++] = 0x80 | (cp & 0x3f);
      } else {
        c = 0xfffd;
        out[n++] = 0xe0 | (c >> 12);
        out[n++] = 0x80 | ((c >> 6) & 0x3f);
        out[n++] = 0x80 | (c & 0x3f);
      }
    } else {
      out[n++] = 0xe0 | (c >> 12);
      out[n++] = 0x80 | ((c >> 6) & 0x3f);
      out[n++] = 0x80 | (c & 0x3f);
    }
  }
  return n;
}

function murmur3Bytes(bytes: Uint8Array, length: number, seed: number): number {
  let h = seed | 0;
  const tail = length & ~3;
  for (let i = 0; i < tail; i += 4) {
    h = mixState(h, mixBlock(bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24)));
  }
  const rest = length & 3;
  if (rest > 0) {
    let k = bytes[tail];
    if (rest > 1) k ^= bytes[tail + 1] << 8;
    if (rest > 2) k ^= bytes[tail + 2] << 16;
    h ^= mixBlock(k);
  }
  return fmix32(h ^ length) >>> 0;
}
