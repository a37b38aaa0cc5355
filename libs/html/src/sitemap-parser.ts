import { createGunzip } from 'node:zlib';
import { Changefreq, MAX_URL_CHARS } from '@crawler/contracts';
import { Parser } from 'htmlparser2';
import { forgetOutermostElements } from './open-elements';

/** One `<loc>` of a sitemap: a page of a urlset, or a child sitemap of an index. */
export interface SitemapEntry {
  loc: string;
  /**
   * Set when the `<loc>` is longer than a message carries: `loc` is then its first MAX_URL_CHARS characters,
   * and the URL filter counts it as too-long.
   */
  length?: number;
  /** `<priority>` (0…1) of a urlset entry, when it is a number in range. */
  priority?: number;
  /** `<lastmod>` of a urlset entry (ms since epoch), when it is a W3C datetime. */
  lastmod?: number;
  /** `<changefreq>` of a urlset entry, when it is one of the protocol's values. */
  changefreq?: Changefreq;
}

/** The fields of an entry read besides `<loc>`. */
const FIELDS = ['loc', 'priority', 'lastmod', 'changefreq'] as const;
type Field = (typeof FIELDS)[number];
const isField = (name: string): name is Field => (FIELDS as readonly string[]).includes(name);

export interface ParsedSitemap {
  /** `urlset`, `sitemapindex`, a plain-text list of URLs, or not a sitemap at all. */
  format: 'urlset' | 'sitemapindex' | 'text' | 'unknown';
  /** Pages (urlset, text) or child sitemaps (sitemapindex), in document order, at most `maxUrls`. */
  entries: SitemapEntry[];
  /** True when the body was cut at `maxBytes` or entries were dropped at `maxUrls`. */
  truncated: boolean;
}

export interface ParseSitemapOptions {
  /** Bytes of (decompressed) sitemap read at most. */
  maxBytes: number;
  /** Entries kept at most (the protocol allows 50,000 per file). */
  maxUrls: number;
}

const GZIP_MAGIC = [0x1f, 0x8b];

/**
 * Reads a sitemap (sitemaps.org 0.9): XML urlset or sitemap index, gzip-compressed or not, or a text file
 * of one URL a line. A `.xml.gz` arrives as raw gzip (it is the file, not a Content-Encoding), so gzip is
 * recognised by its magic bytes and inflated up to `maxBytes` — a gzip bomb yields a truncated sitemap,
 * not an exhausted heap. htmlparser2 in XML mode recovers from any input: a broken file yields the
 * entries before the damage.
 */
export async function parseSitemap(body: Buffer, options: ParseSitemapOptions): Promise<ParsedSitemap> {
  let truncated = false;
  let bytes = body;
  if (body[0] === GZIP_MAGIC[0] && body[1] === GZIP_MAGIC[1]) {
    ({ bytes, truncated } = await gunzipCapped(body, options.maxBytes));
  } else if (body.length > options.maxBytes) {
    bytes = body.subarray(0, options.maxBytes);
    truncated = true;
  }
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
  const parsed = /^\s*</.test(text) ? parseXml(text, options.maxUrls) : parseText(text, options.maxUrls);
  return { ...parsed, truncated: truncated || parsed.truncated };
}

function parseXml(text: string, maxUrls: number): ParsedSitemap {
  let format: ParsedSitemap['format'] = 'unknown';
  const entries: SitemapEntry[] = [];
  let truncated = false;
  let entry: (Record<Field, string> & { closed: boolean }) | null = null;
  let field: Field | null = null;

  const local = (name: string) => name.slice(name.lastIndexOf(':') + 1).toLowerCase();
  const parser = new Parser(
    {
      onopentag(raw) {
        forgetOutermostElements(parser);
        const name = local(raw);
        if (format === 'unknown' && (name === 'urlset' || name === 'sitemapindex')) format = name;
        else if ((name === 'url' && format === 'urlset') || (name === 'sitemap' && format === 'sitemapindex')) {
          entry = { loc: '', priority: '', lastmod: '', changefreq: '', closed: false };
        } else if (entry && isField(name)) field = name;
      },
      ontext(data) {
        // A loc is kept whole, however long (its length is reported; it is never longer than the body read).
        if (entry && field && (field === 'loc' || entry[field].length < 64)) entry[field] += data;
      },
      onclosetag(raw, implied) {
        const name = local(raw);
        if (isField(name)) {
          // A <loc> closed only by the end of a cut-off file may itself be cut: not a URL to trust.
          if (entry && name === 'loc' && !implied) entry.closed = true;
          field = null;
        } else if (entry && (name === 'url' || name === 'sitemap')) {
          const loc = entry.loc.trim();
          if (entry.closed && loc) {
            if (entries.length < maxUrls) entries.push(withFields(loc, entry));
            else truncated = true;
          }
          entry = null;
        }
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  parser.end(text);
  return { format, entries: format === 'unknown' ? [] : entries, truncated };
}

/** The protocol's text format: one absolute http(s) URL a line, nothing else. */
function parseText(text: string, maxUrls: number): ParsedSitemap {
  const entries: SitemapEntry[] = [];
  let truncated = false;
  for (const line of text.split(/\r?\n/)) {
    const loc = line.trim();
    if (!/^https?:\/\/\S+$/i.test(loc)) continue;
    if (entries.length >= maxUrls) {
      truncated = true;
      break;
    }
    entries.push(cutToCarry(loc));
  }
  return { format: entries.length ? 'text' : 'unknown', entries, truncated };
}

/** An entry with the fields that hold a valid value; a bad `<priority>`, `<lastmod>` or `<changefreq>` is left out. */
function withFields(loc: string, raw: Record<Field, string>): SitemapEntry {
  const entry = cutToCarry(loc);
  const priority = Number(raw.priority.trim());
  if (raw.priority.trim() !== '' && priority >= 0 && priority <= 1) entry.priority = priority;
  const lastmod = w3cDatetime(raw.lastmod.trim());
  if (lastmod !== undefined) entry.lastmod = lastmod;
  const changefreq = Changefreq.safeParse(raw.changefreq.trim().toLowerCase());
  if (changefreq.success) entry.changefreq = changefreq.data;
  return entry;
}

/** A W3C datetime (`2024`, `2024-05-01`, `2024-05-01T10:00:00+02:00`…) as ms since epoch; a date alone is UTC midnight. */
function w3cDatetime(text: string): number | undefined {
  if (!/^\d{4}(-\d{2}(-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?)?)?$/.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : undefined;
}

/** A loc longer than a message carries is cut to MAX_URL_CHARS, with its full length. */
function cutToCarry(loc: string): SitemapEntry {
  return loc.length > MAX_URL_CHARS ? { loc: loc.slice(0, MAX_URL_CHARS), length: loc.length } : { loc };
}

/** Inflates at most `maxBytes`; a cut or corrupt stream yields what inflated before the damage. */
function gunzipCapped(body: Buffer, maxBytes: number): Promise<{ bytes: Buffer; truncated: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const gunzip = createGunzip();
    const finish = (truncated: boolean) => {
      if (done) return;
      done = true;
      gunzip.destroy();
      resolve({ bytes: Buffer.concat(chunks).subarray(0, maxBytes), truncated });
    };
    gunzip.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > maxBytes) finish(true);
    });
    gunzip.on('end', () => finish(false));
    gunzip.on('error', () => finish(true));
    gunzip.end(body);
  });
}
