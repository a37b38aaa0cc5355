import { analyse } from 'chardet';
import sniffHtmlEncoding from 'html-encoding-sniffer';
import * as iconv from 'iconv-lite';
import * as whatwgEncoding from 'whatwg-encoding';

/** Where the charset came from, strongest first. */
export type CharsetSource = 'bom' | 'http' | 'meta' | 'detected' | 'default';

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

/**
 * Decodes an HTML body following the HTML Standard's encoding sniffing order — BOM, then the HTTP
 * Content-Type charset, then a `<meta>` prescan of the first 1024 bytes — then statistical detection,
 * then windows-1252. Never throws. Two departures, both so that a wrong declaration is not decoded into
 * mojibake (DESIGN §3.4):
 * - a declared UTF-8 that is not valid UTF-8 is ignored (the next declaration, else detection, decides);
 * - a declared legacy encoding whose bytes are valid UTF-8 with non-ASCII content is decoded as UTF-8
 *   ('detected'): natural text in a legacy encoding is practically never valid UTF-8 by accident.
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
  for (const [charset, source] of declared) {
    if (!charset) continue;
    if (charset === 'UTF-8') {
      if (isValidUtf8(bytes)) return decodeAs(bytes, charset, source);
      continue;
    }
    if (isAsciiCompatible(charset) && hasNonAscii(bytes) && isValidUtf8(bytes)) {
      return decodeAs(bytes, 'UTF-8', 'detected');
    }
    return decodeAs(bytes, charset, source);
  }

  const detected = detectCharset(bytes);
  if (detected) return decodeAs(bytes, detected, 'detected');
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

  // Markup is ASCII and dilutes the byte statistics: detect on the text between tags when there is any.
  const head = bytes.subarray(0, DETECTION_SAMPLE * 4);
  const text = stripTags(head);
  const sample = (hasNonAscii(text) ? text : head).subarray(0, DETECTION_SAMPLE);

  // Candidates ranked by confidence, deduplicated by WHATWG name (ISO-8859-1 and windows-1252 are one).
  const ranked: [string, number][] = [];
  for (const match of analyse(sample)) {
    const name = whatwgEncoding.labelToName(match.name);
    if (name && !ranked.some(([n]) => n === name)) ranked.push([name, match.confidence]);
  }
  if (ranked.length === 0) return null;
  const [[best, confidence], runnerUp] = ranked;
  if (confidence >= CONFIDENT) return best;
  if (confidence < PLAUSIBLE) return null;
  if (best === DEFAULT_CHARSET || confidence >= 2 * (runnerUp?.[1] ?? 0)) return best;
  return null;
}

function decodeAs(bytes: Uint8Array, charset: string, source: CharsetSource): DecodedHtml {
  // iconv-lite replaces bad sequences with U+FFFD (never throws) and strips a BOM; it lacks
  // x-user-defined, which whatwg-encoding implements.
  const text =
    charset === 'x-user-defined' ? whatwgEncoding.decode(bytes, charset) : iconv.decode(bytes, charset);
  return { text, charset, source };
}

/** Strict UTF-8 check that tolerates a sequence cut off at the very end (bodies are truncated at a size cap). */
function isValidUtf8(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true });
    return true;
  } catch {
    return false;
  }
}

function hasNonAscii(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) if (bytes[i] >= 0x80) return true;
  return false;
}

/** UTF-16 is the only decodable family in which ASCII bytes do not stand for ASCII characters. */
function isAsciiCompatible(charset: string): boolean {
  return charset !== 'UTF-16LE' && charset !== 'UTF-16BE';
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
