import { isAscii, isUtf8 } from 'node:buffer';
import { analyse } from 'chardet';
import sniffHtmlEncoding from 'html-encoding-sniffer';
import * as iconv from 'iconv-lite';
import * as whatwgEncoding from 'whatwg-encoding';

/**
 * Where the charset came from, strongest first:
 * - 'bom', 'http', 'meta': the byte order mark, the Content-Type charset, the `<meta>` prescan;
 * - 'detected-over-declared': a declaration was there but plainly wrong, and the bytes decided (see decodeHtml);
 * - 'detected': nothing was declared and statistical detection decided;
 * - 'default': nothing declared or detected (windows-1252).
 */
export type CharsetSource = 'bom' | 'http' | 'meta' | 'detected-over-declared' | 'detected' | 'default';

export interface DecodedHtml {
  text: string;
  /** Canonical WHATWG encoding name, e.g. 'UTF-8', 'windows-1251', 'Shift_JIS'. */
  charset: string;
  source: CharsetSource;
}

/** The HTML Standard's fallback for "all other locales" (including en). */
const DEFAULT_CHARSET = 'windows-1252';
/** chardet's answer is taken as-is from this confidence (0–100) up. */
const CONFIDENT = 50;
/**
 * Below CONFIDENT, an answer at least this confident is still taken when it leads the runner-up twofold
 * (single-byte Cyrillic/Greek/Central-European text scores 20–50 even when unambiguous: a Tolstoy
 * paragraph in windows-1251 scores 29, the next candidate 5; the alternative is a blind windows-1252),
 * or when it is windows-1252 itself (same text as the default, but now known rather than assumed).
 */
const PLAUSIBLE = 20;
/** Detection reads at most this many bytes of text (chardet runs ~27 recognisers over every byte). */
const DETECTION_SAMPLE = 64 * 1024;
/** Mojibake is judged on at most this many bytes of that text: it shows within a few sentences. */
const EVIDENCE_SAMPLE = 16 * 1024;

/**
 * Decodes an HTML body following the HTML Standard's encoding sniffing order — BOM, then the HTTP
 * Content-Type charset, then a `<meta>` prescan of the first 1024 bytes — then statistical detection,
 * then windows-1252. Never throws. A declaration that is plainly wrong is overruled, so that it is not
 * decoded into mojibake; the answer's source is then 'detected-over-declared':
 * - a declared UTF-8 that is not valid UTF-8 is ignored (the next declaration, else detection, decides);
 * - a declared UTF-16 (no BOM) is ignored when the first 1024 bytes hold no 0x00: UTF-16 markup has one
 *   beside every ASCII character;
 * - a declared legacy encoding whose bytes are valid UTF-8 with non-ASCII content is decoded as UTF-8:
 *   natural text in a legacy encoding is practically never valid UTF-8 by accident;
 * - a declared legacy encoding whose decoded text shows mojibake (see looksMisdecoded: invalid sequences,
 *   C1 controls, symbols inside words, words mixing Latin with Cyrillic or Greek, words made only of
 *   accented Latin letters, case inverted) gives way to the charset detection ranks above it, provided that
 *   one decodes without such signs. Windows-1251 or Shift_JIS served as ISO-8859-1 is caught this way.
 *   A correct label is never overruled, because its text shows no mojibake; the price is that a wrong
 *   label whose decode also looks like natural text is kept (KOI8-R and windows-1251 are told apart by
 *   their case patterns, but e.g. EUC-KR served as GB18030 decodes into clean, meaningless Chinese).
 * Encodings iconv-lite cannot decode (ISO-2022-JP, ISO-8859-8-I, x-mac-cyrillic, 'replacement') count
 * as undeclared (whatwg-encoding's labelToName answers null for them).
 */
export function decodeHtml(bytes: Uint8Array, contentTypeHeader?: string): DecodedHtml {
  const bom = whatwgEncoding.getBOMEncoding(bytes);
  if (bom) return decodeAs(bytes, bom, 'bom');

  const declared: [string | null, CharsetSource][] = [
    [charsetFromContentType(contentTypeHeader), 'http'],
    [prescanMetaCharset(bytes), 'meta'],
  ];
  let overruled = false; // a declaration was ignored: what detection finds then overrules it
  for (const [charset, source] of declared) {
    if (!charset) continue;
    if (charset === 'UTF-8') {
      const text = utf8Text(bytes);
      if (text !== null) return { text, charset, source };
      overruled = true;
    } else if (!isAsciiCompatible(charset)) {
      if (couldBeUtf16(bytes)) return decodeAs(bytes, charset, source);
      overruled = true;
    } else if (!hasNonAscii(bytes)) {
      return decodeAs(bytes, charset, source); // every ASCII-compatible charset decodes it identically
    } else {
      const text = utf8Text(bytes);
      if (text !== null) return { text, charset: 'UTF-8', source: 'detected-over-declared' };
      const better = overrulingCharset(bytes, charset);
      return better ? decodeAs(bytes, better, 'detected-over-declared') : decodeAs(bytes, charset, source);
    }
  }

  const detected = detectCharset(bytes);
  if (detected) return decodeAs(bytes, detected, overruled ? 'detected-over-declared' : 'detected');
  return decodeAs(bytes, DEFAULT_CHARSET, 'default');
}

/** The charset parameter of a Content-Type value as a WHATWG name; the last one wins, as in WHATWG MIME extraction. */
export function charsetFromContentType(header?: string): string | null {
  if (!header) return null;
  let label: string | undefined;
  for (const m of header.matchAll(/;\s*charset\s*=\s*(?:"([^"]*)"|([^;,\s]*))/gi)) label = m[1] ?? m[2];
  return label ? whatwgEncoding.labelToName(label) : null;
}

/**
 * The `<meta charset>` / `<meta http-equiv=content-type content="…charset=…">` prescan of the first
 * 1024 bytes, as html-encoding-sniffer implements it (with the spec's utf-16 → UTF-8 and
 * x-user-defined → windows-1252 rewrites). Call only after the BOM check: the sniffer checks a BOM first.
 */
export function prescanMetaCharset(bytes: Uint8Array): string | null {
  try {
    return sniffHtmlEncoding(bytes, { defaultEncoding: null });
  } catch {
    // html-encoding-sniffer 4.0.0 throws a TypeError when a content attribute ends in "charset" with no
    // "=" (it reads past the end of the value). The spec answer there is "no encoding from this meta";
    // a later meta in the same 1024 bytes is lost, and detection decides instead.
    return null;
  }
}

/** Statistical detection (chardet), only when confident; null when undecided. */
export function detectCharset(bytes: Uint8Array): string | null {
  if (!hasNonAscii(bytes)) return null; // every ASCII-compatible charset decodes it identically
  if (isValidUtf8(bytes)) return 'UTF-8';

  const ranked = rankCharsets(textSample(bytes));
  if (ranked.length === 0) return null;
  const [[best, confidence], runnerUp] = ranked;
  if (confidence >= CONFIDENT) return best;
  if (confidence < PLAUSIBLE) return null;
  if (best === DEFAULT_CHARSET || confidence >= 2 * (runnerUp?.[1] ?? 0)) return best;
  return null;
}

/**
 * The charset to decode with instead of a declared ASCII-compatible `declared`, or null to keep it. Only
 * when the declared decode looks misdecoded: then the first candidate detection ranks above `declared`
 * (at least PLAUSIBLE) whose own decode does not. Detection ranking `declared` first keeps it.
 */
function overrulingCharset(bytes: Uint8Array, declared: string): string | null {
  const sample = textSample(bytes);
  const evidence = sample.subarray(0, EVIDENCE_SAMPLE);
  if (!looksMisdecoded(decodeText(evidence, declared))) return null;
  for (const [candidate, confidence] of rankCharsets(sample)) {
    if (candidate === declared || confidence < PLAUSIBLE) return null;
    if (!looksMisdecoded(decodeText(evidence, candidate))) return candidate;
  }
  return null;
}

/**
 * What detection reads: the bytes between tags when they hold non-ASCII (markup is ASCII and dilutes the
 * byte statistics), else the head of the body; at most DETECTION_SAMPLE bytes.
 */
function textSample(bytes: Uint8Array): Uint8Array {
  const head = bytes.subarray(0, DETECTION_SAMPLE * 4);
  const text = stripTags(head);
  return (hasNonAscii(text) ? text : head).subarray(0, DETECTION_SAMPLE);
}

/** chardet's candidates ranked by confidence, deduplicated by WHATWG name (ISO-8859-1 and windows-1252 are one). */
function rankCharsets(sample: Uint8Array): [string, number][] {
  const ranked: [string, number][] = [];
  for (const match of analyse(sample)) {
    const name = whatwgEncoding.labelToName(match.name);
    if (name && !ranked.some(([n]) => n === name)) ranked.push([name, match.confidence]);
  }
  return ranked;
}

/** Mojibake evidence is counted from this many occurrences up (one stray byte proves nothing). */
const MIN_EVIDENCE = 3;
/** Share of the non-ASCII characters that are broken (U+FFFD, C1 controls, rare code points, symbols in words). */
const BROKEN_SHARE = 0.03;
/** Share of the words with non-ASCII letters that are implausible (mixed scripts, accents only, case inverted). */
const ODD_WORD_SHARE = 0.25;
/** Share of capitals among cased non-ASCII letters (natural text is mostly lower case), from CASED_SAMPLE letters up. */
const UPPER_SHARE = 0.6;
const CASED_SAMPLE = 20;

/**
 * Non-letters that a single-byte decode of the wrong table puts where a letter was: the Latin-1 upper
 * half and windows-1252's extra punctuation, KOI8's box drawing and maths, ISO-8859-5's №. Left out
 * because natural text has them next to letters: « » ° · soft hyphen, curly quotes, dashes.
 */
const WRONG_TABLE_SYMBOL =
  '[\u00A1-\u00AA\u00AC\u00AE\u00AF\u00B1-\u00B4\u00B6\u00B8\u00B9\u00BC-\u00BF\u00D7\u00F7' +
  '\u02DC\u201A\u201E\u2020-\u2022\u2026\u2030\u2039\u203A\u20AC\u2116\u2122' +
  '\u2219-\u221A\u2248\u2264\u2265\u2320\u2321\u2500-\u25A0]';
/** A letter, then such symbols, then a letter: "Po³o¿ona" (Polish ISO-8859-2 read as windows-1252). */
const SYMBOL_IN_WORD = new RegExp(`\\p{L}${WRONG_TABLE_SYMBOL}+(?=\\p{L})`, 'gu');

/**
 * Whether decoded text shows the marks of the wrong table (mojibake) rather than of a natural language:
 * - broken characters: U+FFFD (invalid sequences), C1 controls, code points rare in text (isRareInText),
 *   symbols inside words;
 * - odd words (runs of cased letters with a non-ASCII one): Latin letters mixed with Cyrillic or Greek
 *   (a windows-1252 page read as windows-1251), three or more accented Latin letters and nothing else
 *   (Cyrillic, Greek, Hebrew read as windows-1252: "Ìîñêâà"), a lower-case letter followed by a capital,
 *   one of them non-ASCII ("мНЯЙБЮ": windows-1251 read as KOI8-R, whose tables swap the cases);
 * - mostly capitals among the non-ASCII letters together with such inverted words (KOI8-R ↔ windows-1251
 *   again, where the text's few capitalised words are the only inverted ones). Capitals alone are no
 *   evidence: menus and notices are set in capitals.
 * Each needs MIN_EVIDENCE occurrences and its share: a correct page with a stray bad byte stays correct.
 */
export function looksMisdecoded(text: string): boolean {
  let nonAscii = 0;
  let broken = 0;
  let cased = 0; // non-ASCII letters with a case …
  let upper = 0; // … and how many of them are capitals
  let words = 0; // words with a non-ASCII letter …
  let odd = 0; // … that mix scripts or are accented letters only
  let inverted = 0; // … that have a capital after a lower-case letter

  // The word being read.
  let length = 0;
  let foreign = 0;
  let scripts = 0;
  let accentedOnly = true;
  let flipped = false;
  let prevLower = false;
  let prevForeign = false;
  const endWord = (): void => {
    if (foreign > 0) {
      words++;
      if (flipped) inverted++;
      else if ((accentedOnly && length >= 3) || (scripts & (scripts - 1)) !== 0) odd++;
    }
    length = foreign = scripts = 0;
    accentedOnly = true;
    flipped = prevLower = prevForeign = false;
  };

  for (const ch of text) {
    const c = ch.codePointAt(0) as number;
    let isUpper: boolean;
    let isLower: boolean;
    if (c < 0x80) {
      isUpper = c >= 0x41 && c <= 0x5a;
      isLower = c >= 0x61 && c <= 0x7a;
    } else {
      nonAscii++;
      if (c === 0xfffd || c <= 0x9f || isRareInText(c)) {
        broken++;
        endWord();
        continue;
      }
      isUpper = ch !== ch.toLowerCase();
      isLower = !isUpper && ch !== ch.toUpperCase();
      if (isUpper) upper++;
      if (isUpper || isLower) cased++;
    }
    if (!isUpper && !isLower) {
      endWord();
      continue;
    }
    const isForeign = c >= 0x80;
    length++;
    if (isForeign) foreign++;
    scripts |= scriptBit(c);
    if (!isForeign || c > 0x24f) accentedOnly = false;
    if (isUpper && prevLower && (isForeign || prevForeign)) flipped = true;
    prevLower = isLower;
    prevForeign = isForeign;
  }
  endWord();

  if (nonAscii === 0) return false;
  broken += text.match(SYMBOL_IN_WORD)?.length ?? 0;
  if (broken >= MIN_EVIDENCE && broken >= BROKEN_SHARE * nonAscii) return true;
  if (odd + inverted >= MIN_EVIDENCE && odd + inverted >= ODD_WORD_SHARE * words) return true;
  return inverted >= MIN_EVIDENCE && cased >= CASED_SAMPLE && upper >= UPPER_SHARE * cased;
}

/** 1 Latin, 2 Greek, 4 Cyrillic (the scripts single-byte tables mix up), 0 anything else. */
function scriptBit(c: number): number {
  if (c < 0x250 || (c >= 0x1e00 && c <= 0x1eff)) return 1;
  if ((c >= 0x370 && c <= 0x3ff) || (c >= 0x1f00 && c <= 0x1fff)) return 2;
  if (c >= 0x400 && c <= 0x52f) return 4;
  return 0;
}

/**
 * Code points a legacy CJK table holds but natural text almost never uses, so a decode full of them read
 * the bytes with the wrong table (GB18030 read as Big5 yields HKSCS's extras): private use, control
 * pictures, CJK radicals, the supplementary ideograph planes.
 */
function isRareInText(c: number): boolean {
  return (c >= 0xe000 && c <= 0xf8ff) || (c >= 0x2400 && c <= 0x243f) || (c >= 0x2e80 && c <= 0x2fdf) || (c >= 0x20000 && c <= 0x3ffff);
}

function decodeAs(bytes: Uint8Array, charset: string, source: CharsetSource): DecodedHtml {
  return { text: decodeText(bytes, charset), charset, source };
}

function decodeText(bytes: Uint8Array, charset: string): string {
  // iconv-lite replaces bad sequences with U+FFFD (never throws) and strips a BOM; it lacks
  // x-user-defined, which whatwg-encoding implements.
  return charset === 'x-user-defined' ? whatwgEncoding.decode(bytes, charset) : iconv.decode(bytes, charset);
}

/** Strict UTF-8 check that tolerates a sequence cut off at the very end (bodies are truncated at a size cap). */
function isValidUtf8(bytes: Uint8Array): boolean {
  return isUtf8(bytes) || utf8Text(bytes) !== null;
}

/**
 * The text of bytes that are valid UTF-8, else null: the check and the decoding in one pass. A sequence cut
 * off at the very end is tolerated and ends the text as one U+FFFD, as iconv-lite (decodeText) ends it.
 */
function utf8Text(bytes: Uint8Array): string | null {
  // Whole and valid, as nearly every page is: checked and decoded natively, a third of TextDecoder's time.
  if (isUtf8(bytes)) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8', hasUtf8Bom(bytes) ? 3 : 0);
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let text: string;
  try {
    text = decoder.decode(bytes, { stream: true });
  } catch {
    return null;
  }
  try {
    decoder.decode();
  } catch {
    text += '\uFFFD';
  }
  return text;
}

function hasNonAscii(bytes: Uint8Array): boolean {
  return !isAscii(bytes);
}

/** TextDecoder drops a leading byte order mark; the native decoding keeps it. */
function hasUtf8Bom(bytes: Uint8Array): boolean {
  return bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
}

/** UTF-16 is the only decodable family in which ASCII bytes do not stand for ASCII characters. */
function isAsciiCompatible(charset: string): boolean {
  return charset !== 'UTF-16LE' && charset !== 'UTF-16BE';
}

/** UTF-16 markup has a 0x00 beside every ASCII character; a page with none in its first 1024 bytes is not UTF-16. */
function couldBeUtf16(bytes: Uint8Array): boolean {
  return bytes.length < 64 || bytes.subarray(0, 1024).includes(0);
}

/**
 * The bytes outside `<…>` (the input filter ICU's detector has and chardet lacks). Safe for the legacy
 * multi-byte encodings: their trail bytes are ≥ 0x40, so never '<' (0x3C) or '>' (0x3E).
 */
function stripTags(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length);
  let n = 0;
  let inTag = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b === 0x3c) inTag = true;
    else if (b === 0x3e && inTag) inTag = false;
    else if (!inTag) out[n++] = b;
  }
  return out.subarray(0, n);
}
