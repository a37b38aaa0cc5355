/**
 * MurmurHash3 x86_32 (Austin Appleby's reference `MurmurHash3_x86_32`) over the UTF-8 bytes of a string.
 *
 * The ring's points ARE a shared format: every downloader and every frontier replica must put a host on the
 * same point, in any process, on any Node version. So the hash is written out here, over UTF-8 bytes we
 * encode ourselves — nothing depends on a library's or an engine's string hashing — and the spec pins it to
 * the reference test vectors. Murmur3 rather than FNV-1a: its finaliser avalanches, so near-identical inputs
 * such as `downloader-1#17` and `downloader-1#18` land far apart, which is what virtual nodes need.
 * Changing anything below reassigns every host.
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

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;
/**
 * Bound once: inside a vm context (jest's sandbox) every lookup of the global `Math` goes through the
 * context's interceptor, which made each hash 30× slower (2 µs instead of 65 ns) when the loop said `Math.imul`.
 */
const imul = Math.imul;

function murmur3Bytes(bytes: Uint8Array, length: number, seed: number): number {
  let h = seed >>> 0;
  const tail = length & ~3;
  let k: number;
  for (let i = 0; i < tail; i += 4) {
    k = bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24);
    k = imul(k, C1);
    k = (k << 15) | (k >>> 17);
    k = imul(k, C2);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (imul(h, 5) + 0xe6546b64) | 0;
  }
  const rest = length & 3;
  if (rest > 0) {
    k = bytes[tail];
    if (rest > 1) k ^= bytes[tail + 1] << 8;
    if (rest > 2) k ^= bytes[tail + 2] << 16;
    k = imul(k, C1);
    k = (k << 15) | (k >>> 17);
    k = imul(k, C2);
    h ^= k;
  }
  h ^= length;
  h ^= h >>> 16;
  h = imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
