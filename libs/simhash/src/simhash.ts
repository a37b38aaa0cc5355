import { fmix32 as murmur3Fmix32 } from '@crawler/murmur3';

/**
 * 64-bit simhash (Charikar, "Similarity estimation techniques from rounding algorithms", 2002) of a page's
 * text, the near-duplicate fingerprint of Manku, Jain & Das Sarma ("Detecting near-duplicates for web
 * crawling", 2007): pages whose texts share most of their features have simhashes a few bits apart.
 *
 * - Features: 3-word shingles of the lower-cased text. A word is a run of letters, digits and marks; each
 *   Han, kana, Thai, Lao, Khmer or Myanmar character is a word of its own (those scripts do not put spaces
 *   between words), so their shingles are character trigrams. A text of one or two words is one shingle.
 * - Weights: every occurrence of a shingle counts once, so a feature weighs its frequency in the page.
 * - Each shingle gets a 64-bit hash (two independent 32-bit lanes, no BigInt); bit i of the simhash is 1 when
 *   more shingle occurrences have bit i set than clear (ties, and the empty text, give 0).
 *
 * What a threshold of k bits catches: for texts whose shingle-count vectors have cosine similarity ρ, each
 * bit differs with probability arccos(ρ)/π, so they are 64·arccos(ρ)/π bits apart on average, and k = 3
 * means ρ ≳ 0.99: texts that differ in about 1 % of their shingles. Changing s consecutive words of an
 * n-word text changes s + 2 shingles. Measured on pseudo-English (the spec): one word changed in 500 →
 * ≈ 2 bits, ≤ 3 for ≈ 80 % of pages; one 8–20-word sentence changed in 500 words → ≈ 5 bits, ≤ 3 for only
 * ≈ 25 % (a limit of 64-bit simhash at k = 3, not of this code); the same sentence in 5,000 words → ≤ 3 for
 * ≈ 95 %. Unrelated texts are ≈ 32 bits apart (never ≤ 10 in the spec's 200 pairs).
 *
 * The simhash is persisted (it is the key of the near-duplicate index in Redis): changing anything below,
 * or MurmurHash3's finaliser in `@crawler/murmur3`, changes the simhashes and strands the stored index; the golden values in the spec pin it.
 */

const SHINGLE = 3;

// A module constant, not a global lookup in the hot loops (inside a vm context, as under jest, every global
// lookup goes through the context's interceptors and the loop runs ~30× slower).
const imul = Math.imul;
/**
 * MurmurHash3's finaliser, bound once for the same reason: a library's barrel re-exports through getters, and
 * calling through one in the shingle loop made simhash64 twice as slow.
 */
const fmix32 = murmur3Fmix32;

/** Character classes, by UTF-16 code unit. */
const SEPARATOR = 1;
const WORD = 2;
/** A character that is a word by itself. */
const SOLO = 3;

/**
 * Classes of code units, filled in lazily (a page uses few of them): 0 = not classified yet. Only lower-case
 * text is classified. Surrogate halves count as word characters, so an astral letter (or emoji) is part of
 * a word.
 */
const classes = new Uint8Array(0x10000);
const WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;
const SOLO_CHAR = /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Thai}\p{sc=Lao}\p{sc=Khmer}\p{sc=Myanmar}]/u;

function classify(code: number): number {
  if (code < 128) return (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39) ? WORD : SEPARATOR;
  if (code >= 0xd800 && code <= 0xdfff) return WORD;
  const char = String.fromCharCode(code);
  return SOLO_CHAR.test(char) ? SOLO : WORD_CHAR.test(char) ? WORD : SEPARATOR;
}

/**
 * Adds one shingle (the hashes of its three words, oldest first, in two lanes) to the byte histograms:
 * counts[256·p + v] is the number of shingles whose hash has byte p (0 = most significant) equal to v.
 * Eight increments a shingle instead of 64; the per-bit sums are read off the histograms at the end.
 */
function countShingle(counts: Int32Array, a1: number, a2: number, a3: number, b1: number, b2: number, b3: number): void {
  const sa = fmix32((imul(a1, 0x9e3779b1) + imul(a2, 0x85ebca77) + imul(a3, 0xc2b2ae3d)) | 0);
  const sb = fmix32((imul(b1, 0x27d4eb2f) + imul(b2, 0x165667b1) + imul(b3, 0xd3a2646d)) ^ 0x5bd1e995);
  counts[sa >>> 24]++;
  counts[256 + ((sa >>> 16) & 0xff)]++;
  counts[512 + ((sa >>> 8) & 0xff)]++;
  counts[768 + (sa & 0xff)]++;
  counts[1024 + (sb >>> 24)]++;
  counts[1280 + ((sb >>> 16) & 0xff)]++;
  counts[1536 + ((sb >>> 8) & 0xff)]++;
  counts[1792 + (sb & 0xff)]++;
}

/** The class of a code unit, classified on first sight. */
function classOf(code: number): number {
  const kind = classes[code];
  return kind === 0 ? (classes[code] = classify(code)) : kind;
}

/** The simhash of a text: 16 lowercase hex digits. Deterministic across processes, platforms and versions. */
export function simhash64(text: string): string {
  const lower = text.toLowerCase();
  const n = lower.length;
  const counts = new Int32Array(8 * 256);
  let shingles = 0;
  let words = 0;
  // The last three words' hashes, oldest first, in two lanes (a, b).
  let a1 = 0,
    a2 = 0,
    a3 = 0,
    b1 = 0,
    b2 = 0,
    b3 = 0;

  let i = 0;
  while (i < n) {
    let code = lower.charCodeAt(i);
    let kind = classOf(code);
    if (kind === SEPARATOR) {
      i++;
      continue;
    }
    // A word: a run of word characters, or one solo character. FNV-1a in lane a, a multiply-xorshift in lane b.
    let ha = 0x811c9dc5 | 0;
    let hb = 0x9747b28c | 0;
    let length = 0;
    for (;;) {
      ha = imul(ha ^ code, 0x01000193);
      hb = imul(hb ^ code, 0x5bd1e995);
      hb ^= hb >>> 15;
      length++;
      if (++i >= n || kind === SOLO) break;
      code = lower.charCodeAt(i);
      kind = classOf(code);
      if (kind !== WORD) break;
    }
    // The word ends: shift it into the window, and count the shingle the window now holds.
    a1 = a2;
    a2 = a3;
    a3 = fmix32(ha ^ length);
    b1 = b2;
    b2 = b3;
    b3 = fmix32(hb ^ imul(length, 0x01000193));
    if (++words >= SHINGLE) {
      countShingle(counts, a1, a2, a3, b1, b2, b3);
      shingles++;
    }
  }
  // A text of one or two words is one shingle (the missing words hash to 0).
  if (words > 0 && words < SHINGLE) {
    countShingle(counts, a1, a2, a3, b1, b2, b3);
    shingles++;
  }

  let hi = 0;
  let lo = 0;
  for (let p = 0; p < 8; p++) {
    for (let bit = 7; bit >= 0; bit--) {
      let ones = 0;
      for (let v = 1 << bit; v < 256; v = (v + 1) | (1 << bit)) ones += counts[256 * p + v];
      const set = 2 * ones > shingles ? 1 : 0;
      if (p < 4) hi = (hi << 1) | set;
      else lo = (lo << 1) | set;
    }
  }
  return toHex(hi >>> 0, lo >>> 0);
}

const SIMHASH = /^[0-9a-f]{16}$/;

/** 16 lowercase hex digits. */
export function isSimhash(value: string): boolean {
  return SIMHASH.test(value);
}

/** A simhash as its two 32-bit halves (unsigned). Throws on anything but 16 lowercase hex digits. */
export function simhashHalves(simhash: string): [hi: number, lo: number] {
  if (!SIMHASH.test(simhash)) throw new Error(`not a simhash (16 lowercase hex digits): ${JSON.stringify(simhash)}`);
  return [parseInt(simhash.slice(0, 8), 16), parseInt(simhash.slice(8), 16)];
}

export function toHex(hi: number, lo: number): string {
  return (hi >>> 0).toString(16).padStart(8, '0') + (lo >>> 0).toString(16).padStart(8, '0');
}

/** Bits set in a 32-bit integer. */
export function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return imul(x, 0x01010101) >>> 24;
}

/** Number of bits in which two simhashes differ (0…64). */
export function hammingDistance(a: string, b: string): number {
  const [ahi, alo] = simhashHalves(a);
  const [bhi, blo] = simhashHalves(b);
  return popcount32(ahi ^ bhi) + popcount32(alo ^ blo);
}
