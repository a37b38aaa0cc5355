/**
 * The index written next to every WARC file: CDXJ, the format pywb (and its `cdxj-indexer`, and warcio.js's
 * `warcio index --format cdxj`) reads and writes:
 *
 *   <SURT key> <14-digit UTC timestamp> {"url":…,"mime":…,"status":…,"digest":…,"length":…,"offset":…,"filename":…}
 *
 * one line per response or revisit record (request and warcinfo records are not indexed, as pywb does not),
 * sorted in byte order so a replay tool can binary-search it. `offset`/`length` locate the record's gzip
 * member in the file, `digest` is the payload digest without its `sha1:` prefix, and status, length and
 * offset are strings, as pywb writes them. Chosen over the older space-separated CDX 11 because it is what
 * current tools (pywb, OutbackCDX, warcio) produce and extend, and a JSON block takes new fields without
 * breaking readers.
 */

export interface CdxjEntry {
  /** WARC-Target-URI. */
  url: string;
  /** WARC-Date (ISO). */
  date: string;
  /** Content type without parameters (`warc/revisit` for a revisit); omitted when unknown. */
  mime?: string;
  status?: number;
  /** Payload digest as written in the record (`sha1:…`). */
  digest?: string;
  /** Byte length of the record's gzip member. */
  length: number;
  /** Byte offset of that member in the WARC file. */
  offset: number;
  /** The WARC file's name (no directory), as replay tools resolve it against their archive location. */
  filename: string;
}

/** `20240102030405` from a WARC-Date: the first 14 digits, UTC. */
export function cdxTimestamp(date: string): string {
  const digits = new Date(date).toISOString().replace(/[^0-9]/g, '');
  return digits.slice(0, 14);
}

/** One CDXJ line (no newline), fields in pywb's order. */
export function cdxjLine(entry: CdxjEntry): string {
  const block: Record<string, string> = { url: entry.url };
  if (entry.mime) block.mime = entry.mime;
  if (entry.status !== undefined) block.status = String(entry.status);
  if (entry.digest) block.digest = entry.digest.includes(':') ? entry.digest.slice(entry.digest.indexOf(':') + 1) : entry.digest;
  block.length = String(entry.length);
  block.offset = String(entry.offset);
  block.filename = entry.filename;
  return `${surt(entry.url)} ${cdxTimestamp(entry.date)} ${JSON.stringify(block)}`;
}

/** Lines sorted in byte order (what `LC_ALL=C sort` gives, and what pywb's binary search expects). */
export function sortCdxj(lines: string[]): string[] {
  return lines
    .map((line) => Buffer.from(line, 'utf8'))
    .sort(Buffer.compare)
    .map((bytes) => bytes.toString('utf8'));
}

/** The media type of a Content-Type header value, parameters dropped. */
export function mimeOf(contentType: string | undefined): string | undefined {
  const mime = contentType?.split(';', 1)[0].trim();
  return mime || undefined;
}

// SURT -------------------------------------------------------------------------------------------------------

const PATH_SESSION_IDS = [/^(.*\/)(\((?:[a-z]\([0-9a-z]{24}\))+\)\/)([^?]+\.aspx.*)$/i, /^(.*\/)(\([0-9a-z]{24}\)\/)([^?]+\.aspx.*)$/i];
const QUERY_SESSION_IDS = [
  /^(.*)(?:jsessionid=[0-9a-zA-Z]{32})(?:&(.*))?$/i,
  /^(.*)(?:phpsessid=[0-9a-zA-Z]{32})(?:&(.*))?$/i,
  /^(.*)(?:sid=[0-9a-zA-Z]{32})(?:&(.*))?$/i,
  /^(.*)(?:ASPSESSIONID[a-zA-Z]{8}=[a-zA-Z]{24})(?:&(.*))?$/i,
  /^(.*)(?:cfid=[^&]+&cftoken=[^&]+)(?:&(.*))?$/i,
];

/**
 * The SURT sort key of an http(s) URL, as pywb computes it (the Python `surt` package's defaults, i.e.
 * archive-commons' WaybackURLKeyMaker): `http://www.Example.com:8080/A/b/?z=1&y=2#f` → `com,example:8080)/a/b?y=2&z=1`.
 *
 *  - scheme, user info and fragment dropped; host lower-cased, reversed and comma-joined, a leading `www`,
 *    `www2`… label removed, trailing dots removed; the port kept unless it is the scheme's default;
 *  - path and query unescaped repeatedly then re-escaped minimally (only control, space, non-ASCII, `#`, `%`),
 *    `.`/`..` segments and doubled slashes removed, lower-cased, a trailing `/` removed (except the root);
 *  - session ids (jsessionid, phpsessid, sid, ASPSESSIONID, CFID/CFTOKEN) removed, query arguments sorted,
 *    an empty query dropped.
 *
 * Hosts go through the WHATWG URL parser (IDNA to punycode, numeric IPv4 forms normalised), which covers what
 * the Python package's Google canonicaliser does to hosts. Not an http(s) URL: returned unchanged, as pywb does.
 */
export function surt(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    return url;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return url;

  let host = parsed.hostname
    .replace(/\.{2,}/g, '.')
    .replace(/^\.+|\.+$/g, '')
    .toLowerCase();
  host = host.replace(/^www\d*\./, '');
  const hostKey = (host.startsWith('[') ? [host] : host.split('.').reverse()).join(',');
  const port = parsed.port ? `:${parsed.port}` : '';

  let path = escapeOnce(normalizePath(unescapeRepeatedly(parsed.pathname))).toLowerCase();
  for (const pattern of PATH_SESSION_IDS) {
    const match = pattern.exec(path);
    if (match) path = match[1] + match[3];
  }
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);

  let query = parsed.search.slice(1);
  if (query) {
    query = escapeOnce(unescapeRepeatedly(query));
    for (const pattern of QUERY_SESSION_IDS) {
      const match = pattern.exec(query);
      if (match) query = match[1] + (match[2] ?? '');
    }
    query = alphaReorderQuery(query.toLowerCase());
  }
  return `${hostKey}${port})${path}${query ? `?${query}` : ''}`;
}

/** Decodes %XX escapes until none is left (`%2525` → `%`), bytewise; a lone `%` stays. */
function unescapeRepeatedly(text: string): Buffer {
  let bytes = Buffer.from(text, 'utf8');
  for (;;) {
    const out: number[] = [];
    let changed = false;
    for (let i = 0; i < bytes.length; i++) {
      if (bytes[i] === 0x25 && i + 2 < bytes.length && isHex(bytes[i + 1]) && isHex(bytes[i + 2])) {
        out.push(parseInt(String.fromCharCode(bytes[i + 1], bytes[i + 2]), 16));
        i += 2;
        changed = true;
      } else {
        out.push(bytes[i]);
      }
    }
    if (!changed) return bytes;
    bytes = Buffer.from(out);
  }
}

function isHex(byte: number | undefined): boolean {
  return byte !== undefined && ((byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66));
}

/** Escapes control characters, space, bytes ≥ 0x7f, `#` and `%` (Python's `quote` with the SURT safe set). */
function escapeOnce(bytes: Buffer): string {
  let out = '';
  for (const byte of bytes) {
    out += byte <= 0x20 || byte >= 0x7f || byte === 0x23 || byte === 0x25 ? `%${byte.toString(16).toUpperCase().padStart(2, '0')}` : String.fromCharCode(byte);
  }
  return out;
}

/** Resolves `.` and `..` segments and drops empty ones (doubled slashes), keeping a trailing slash. */
function normalizePath(bytes: Buffer): Buffer {
  const path = bytes.toString('latin1');
  if (!path) return Buffer.from('/');
  const kept: string[] = [];
  for (const segment of path.split('/').slice(1)) {
    if (segment === '.') continue;
    if (segment === '..') {
      if (kept.length > 0) kept.pop();
      else kept.push(segment);
    } else {
      kept.push(segment);
    }
  }
  let out = '/';
  if (kept.length > 0) {
    for (const segment of kept.slice(0, -1)) if (segment) out += `${segment}/`;
    out += kept[kept.length - 1];
  }
  return Buffer.from(out, 'latin1');
}

/** Sorts `a=1&b` by (name, value), an argument without `=` before one with it, as the Python package does. */
function alphaReorderQuery(query: string): string {
  if (query.length <= 1) return query;
  const args = query.split('&').map((arg) => {
    const eq = arg.indexOf('=');
    return eq < 0 ? { name: arg, value: undefined } : { name: arg.slice(0, eq), value: arg.slice(eq + 1) };
  });
  args.sort((a, b) => compare(a.name, b.name) || (a.value === undefined ? (b.value === undefined ? 0 : -1) : b.value === undefined ? 1 : compare(a.value, b.value)));
  return args.map((arg) => (arg.value === undefined ? arg.name : `${arg.name}=${arg.value}`)).join('&');
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
