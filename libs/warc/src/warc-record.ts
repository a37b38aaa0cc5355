import { createHash, randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';

/**
 * WARC 1.1 records as bytes (ISO 28500:2017; https://iipc.github.io/warc-specifications/). Pure functions, no
 * I/O: the writer compresses and stores what these return.
 */

export const WARC_VERSION = 'WARC/1.1';

/** The WARC-Profile URIs of WARC 1.1 revisit records. */
export const REVISIT_PROFILES = {
  /** The payload is identical (same digest) to an earlier capture's; only the headers are recorded. */
  'identical-payload-digest': 'http://netpreserve.org/warc/1.1/revisit/identical-payload-digest',
  /** The server said 304 Not Modified to a conditional request. */
  'server-not-modified': 'http://netpreserve.org/warc/1.1/revisit/server-not-modified',
} as const;
export type RevisitProfile = keyof typeof REVISIT_PROFILES;

/** HTTP headers as the fetcher reports them (one value a name), or as a list that may repeat a name. */
export type HttpHeaders = Readonly<Record<string, string>> | ReadonlyArray<readonly [string, string]>;

/** WARC named fields in the order they are written. */
export type WarcFields = Array<[string, string]>;

const CRLF = '\r\n';
const RECORD_END = Buffer.from('\r\n\r\n');
/** RFC 7230 token: what an HTTP header name may be. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32, unpadded (a SHA-1's 20 bytes fill 32 characters exactly). */
export function base32(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32_ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32_ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** `sha1:<BASE32>`, the digest form of WARC-Block-Digest / WARC-Payload-Digest that wget, Heritrix, warcio and pywb use. */
export function sha1Digest(...parts: Uint8Array[]): string {
  const hash = createHash('sha1');
  for (const part of parts) hash.update(part);
  return `sha1:${base32(hash.digest())}`;
}

const SHA1_DIGEST = /^sha1:[A-Z2-7]{32}$/;

/** Throws unless `digest` is `sha1:` and 32 base32 characters. */
export function assertSha1Digest(digest: string, what: string): void {
  if (typeof digest !== 'string' || !SHA1_DIGEST.test(digest)) {
    throw new Error(`warc: ${what} must look like sha1:<32 base32 characters>, got ${JSON.stringify(digest)}`);
  }
}

export function newRecordId(): string {
  return `<urn:uuid:${randomUUID()}>`;
}

/** A WARC-Date (W3C date-time in UTC, millisecond precision, as WARC 1.1 allows) from an ISO date or epoch ms. */
export function warcDate(date: string | number, what = 'date'): string {
  const parsed = new Date(date);
  if (Number.isNaN(parsed.getTime()) || (typeof date === 'string' && !/^\d{4}-\d{2}-\d{2}T/.test(date))) {
    throw new Error(`warc: ${what} is not an ISO 8601 date-time: ${JSON.stringify(date)}`);
  }
  return parsed.toISOString();
}

/**
 * An absolute http(s) URL fit for WARC-Target-URI: parsed by the WHATWG rules and serialised back, so it has
 * no spaces or control characters (for a URL our canonicaliser produced this is the URL unchanged).
 */
export function targetUri(url: string, what = 'url'): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`warc: ${what} is not an absolute URL: ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new Error(`warc: ${what} is not http(s): ${JSON.stringify(url)}`);
  }
  return parsed.href;
}

function headerList(headers: HttpHeaders, what: string): Array<[string, string]> {
  const list: Array<[string, string]> = Array.isArray(headers)
    ? (headers as ReadonlyArray<readonly [string, string]>).map(([name, value]) => [name, value])
    : Object.entries(headers as Record<string, string>);
  for (const [name, value] of list) {
    if (typeof name !== 'string' || !TOKEN.test(name)) throw new Error(`warc: ${what} header name ${JSON.stringify(name)} is not an HTTP token`);
    if (typeof value !== 'string' || /[\r\n\0]/.test(value)) {
      throw new Error(`warc: ${what} header ${name} has a value that is not a string or holds CR, LF or NUL`);
    }
  }
  return list;
}

/**
 * Header bytes as they came off the wire: Node and undici hand header values over as latin1 strings (one
 * char a byte), so latin1 gives the original bytes back. A value with characters beyond U+00FF cannot have
 * come off the wire that way and is written as UTF-8.
 */
function headerBytes(text: string): Buffer {
  return /[^\u0000-\u00ff]/.test(text) ? Buffer.from(text, 'utf8') : Buffer.from(text, 'latin1');
}

function httpHead(startLine: string, headers: Array<[string, string]>): Buffer {
  return headerBytes(startLine + CRLF + headers.map(([name, value]) => `${name}: ${value}${CRLF}`).join('') + CRLF);
}

const CODING_HEADERS = new Set(['content-encoding', 'transfer-encoding']);

/**
 * The response headers as stored next to a decoded payload. We never see the bytes on the wire: the fetcher
 * hands over the body with its transfer and content codings removed. Writing the original
 * Content-Encoding / Transfer-Encoding would make every WARC reader try to gunzip or de-chunk plain bytes,
 * so they are renamed `x-orig-content-encoding` / `x-orig-transfer-encoding` (kept for the record, ignored by
 * readers) and Content-Length is set to the length of the stored payload. This is the convention of the
 * Webrecorder tools that also archive decoded bodies (browsertrix-crawler, ArchiveWeb.page); tools that
 * capture raw sockets (wget, warcprox, Heritrix) keep the wire bytes and their headers untouched instead.
 *
 * `payloadLength` undefined (a revisit, whose payload lives in another record): Content-Length is kept if it
 * still describes the payload (no coding was applied), otherwise it described the coded wire bytes and is
 * renamed `x-orig-content-length` too.
 */
export function storedResponseHeaders(headers: HttpHeaders, payloadLength: number | undefined): Array<[string, string]> {
  const list = headerList(headers, 'response');
  const coded = list.some(([name]) => CODING_HEADERS.has(name.toLowerCase()));
  const out: Array<[string, string]> = [];
  let lengthWritten = false;
  for (const [name, value] of list) {
    const lower = name.toLowerCase();
    if (CODING_HEADERS.has(lower)) {
      out.push([`x-orig-${name}`, value]);
    } else if (lower === 'content-length') {
      if (payloadLength !== undefined) {
        if (!lengthWritten) out.push([name, String(payloadLength)]);
        lengthWritten = true;
      } else {
        out.push([coded ? `x-orig-${name}` : name, value]);
      }
    } else {
      out.push([name, value]);
    }
  }
  if (payloadLength !== undefined && !lengthWritten) out.push(['content-length', String(payloadLength)]);
  return out;
}

/** `HTTP/1.1 200 OK` plus headers: the HTTP part of a response or revisit block. */
export function httpResponseHead(status: number, statusText: string | undefined, headers: Array<[string, string]>): Buffer {
  if (!Number.isInteger(status) || status < 100 || status > 999) throw new Error(`warc: HTTP status ${status} is not a 3-digit integer`);
  const reason = statusText ?? STATUS_CODES[status] ?? '';
  if (/[\r\n]/.test(reason)) throw new Error('warc: HTTP status text holds CR or LF');
  return httpHead(`HTTP/1.1 ${status}${reason ? ` ${reason}` : ''}`, headers);
}

/**
 * The request as sent, rebuilt from its headers: `GET <path?query> HTTP/1.1` and a Host header when the
 * fetcher did not list one (HTTP/1.1 requires it; the client library adds it on the wire).
 */
export function httpRequestHead(url: string, headers: HttpHeaders): Buffer {
  const parsed = new URL(url);
  const list = headerList(headers, 'request');
  if (!list.some(([name]) => name.toLowerCase() === 'host')) list.unshift(['host', parsed.host]);
  return httpHead(`GET ${parsed.pathname}${parsed.search} HTTP/1.1`, list);
}

/**
 * One record: version line, the named fields, WARC-Block-Digest and Content-Length of the block, a blank
 * line, the block, and the two CRLFs that end a record. Field values are UTF-8 (WARC 1.1 allows it).
 */
export function serializeRecord(fields: WarcFields, block: Buffer): Buffer {
  for (const [name, value] of fields) {
    if (/[\r\n]/.test(value)) throw new Error(`warc: field ${name} holds CR or LF`);
  }
  const head = [WARC_VERSION, ...fields.map(([name, value]) => `${name}: ${value}`), `WARC-Block-Digest: ${sha1Digest(block)}`, `Content-Length: ${block.length}`].join(
    CRLF,
  );
  return Buffer.concat([Buffer.from(head + CRLF + CRLF, 'utf8'), block, RECORD_END]);
}

/** The `application/warc-fields` block of a warcinfo record. */
export function warcFieldsBlock(fields: Record<string, string>): Buffer {
  const lines = Object.entries(fields).map(([name, value]) => {
    if (!TOKEN.test(name) || /[\r\n]/.test(value)) throw new Error(`warc: warcinfo field ${JSON.stringify(name)} is malformed`);
    return `${name}: ${value}${CRLF}`;
  });
  return Buffer.from(lines.join(''), 'utf8');
}

export const CONTENT_TYPE = {
  warcinfo: 'application/warc-fields',
  request: 'application/http;msgtype=request',
  response: 'application/http;msgtype=response',
} as const;
