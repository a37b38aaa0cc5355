import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import type { ContentStore } from './content-store';

/** What is kept about a stored page beside its bytes. */
export interface StoredPageMeta {
  url: string;
  fetchedAt: string;
  status: number;
  contentType: string;
  charset: string;
  title: string;
  truncated: boolean;
  headers: Record<string, string>;
  contentHash: string;
  simhash: string;
  /** The plugin whose body replaced the fetched one (a rendered page: `render`); absent when stored as fetched. */
  via?: string;
}

export interface StoredPage {
  /** The page as fetched. */
  body: Buffer;
  /** Its metadata, when asked for. */
  meta?: StoredPageMeta;
}

/**
 * Where content-seen keeps new pages: gzip-compressed, with their metadata, addressed by a reference that
 * the URL store records (`contentKey`).
 */
export interface PageStore {
  /** Stores a page (its gzip bytes); resolves, once it is written, to the page's reference. */
  store(gzipped: Buffer, meta: StoredPageMeta): Promise<string>;
  /** A stored page by reference, or null when it is not there. */
  read(ref: string, options?: { meta?: boolean }): Promise<StoredPage | null>;
  /** Writes what is pending, then stops. */
  close(): Promise<void>;
}

export const PAGE_STORE = Symbol('PAGE_STORE');

export interface SegmentedPageStoreOptions {
  /** A segment is written at most this long after its first page. @defaultValue 50 */
  lingerMs?: number;
  /** Pages in one segment at most. @defaultValue 256 */
  maxPages?: number;
  /** Compressed bytes in one segment at most. @defaultValue 16777216 */
  maxBytes?: number;
}

interface OpenSegment {
  parts: Buffer[];
  metas: StoredPageMeta[];
  bytes: number;
  waiters: { resolve: (ref: string) => void; reject: (error: unknown) => void }[];
  timer?: NodeJS.Timeout;
}

/**
 * Pages stored together within `lingerMs` form one segment, as web archives store them (WARC files, Nutch
 * segments): `pages/<date>/<id>.gz` is the concatenation of the pages' gzip members (itself a valid gzip
 * file) and `pages/<date>/<id>.index.jsonl` holds one line per page: its offset and length in the segment
 * and its metadata. A page's reference is `pages/<date>/<id>.gz#<offset>.<length>`, read with one ranged
 * GET. Two objects per segment instead of one per page: an object store's cost is per request, and a crawl
 * stores hundreds of pages a second.
 *
 * A page is acknowledged only once its segment and index are written (the caller awaits `store`), so a
 * crash loses no acknowledged page; a message redelivered after a crash stores its page again, in another
 * segment.
 */
export class SegmentedPageStore implements PageStore {
  private readonly instance = randomBytes(6).toString('base64url').replace(/[-_]/g, 'x');
  private sequence = 0;
  private open?: OpenSegment;
  private readonly writing = new Set<Promise<void>>();
  private readonly lingerMs: number;
  private readonly maxPages: number;
  private readonly maxBytes: number;

  constructor(
    private readonly content: ContentStore,
    options: SegmentedPageStoreOptions = {},
  ) {
    this.lingerMs = options.lingerMs ?? 50;
    this.maxPages = options.maxPages ?? 256;
    this.maxBytes = options.maxBytes ?? 16 * 1024 * 1024;
  }

  store(gzipped: Buffer, meta: StoredPageMeta): Promise<string> {
    return new Promise((resolve, reject) => {
      const segment = (this.open ??= this.startSegment());
      segment.parts.push(gzipped);
      segment.metas.push(meta);
      segment.bytes += gzipped.length;
      segment.waiters.push({ resolve, reject });
      if (segment.parts.length >= this.maxPages || segment.bytes >= this.maxBytes) this.seal();
    });
  }

  async read(ref: string, options: { meta?: boolean } = {}): Promise<StoredPage | null> {
    const at = parsePageRef(ref);
    const member = await this.content.getRange(at.key, at.offset, at.length);
    if (!member || member.length < at.length) return null;
    const page: StoredPage = { body: gunzipSync(member) };
    if (options.meta) page.meta = await this.meta(at.key, at.offset);
    return page;
  }

  async close(): Promise<void> {
    this.seal();
    while (this.writing.size) await Promise.allSettled([...this.writing]);
  }

  private async meta(key: string, offset: number): Promise<StoredPageMeta | undefined> {
    const index = await this.content.get(indexKeyOf(key));
    for (const line of index?.body.toString('utf8').split('\n') ?? []) {
      if (!line) continue;
      const entry = JSON.parse(line) as { offset: number; meta: StoredPageMeta };
      if (entry.offset === offset) return entry.meta;
    }
    return undefined;
  }

  private startSegment(): OpenSegment {
    const segment: OpenSegment = { parts: [], metas: [], bytes: 0, waiters: [] };
    segment.timer = setTimeout(() => this.open === segment && this.seal(), this.lingerMs);
    return segment;
  }

  private seal(): void {
    const segment = this.open;
    if (!segment) return;
    this.open = undefined;
    clearTimeout(segment.timer);
    const write = this.write(segment).finally(() => this.writing.delete(write));
    this.writing.add(write);
  }

  private async write(segment: OpenSegment): Promise<void> {
    const day = new Date().toISOString().slice(0, 10);
    const key = `pages/${day}/${this.instance}-${(this.sequence++).toString(36)}.gz`;
    try {
      let offset = 0;
      const refs: string[] = [];
      const lines: string[] = [];
      segment.parts.forEach((part, i) => {
        refs.push(`${key}#${offset}.${part.length}`);
        lines.push(JSON.stringify({ offset, length: part.length, meta: segment.metas[i] }));
        offset += part.length;
      });
      await this.content.put(key, Buffer.concat(segment.parts), { pages: String(segment.parts.length) });
      await this.content.put(indexKeyOf(key), Buffer.from(`${lines.join('\n')}\n`), { contentType: 'application/x-ndjson' });
      segment.waiters.forEach((w, i) => w.resolve(refs[i]));
    } catch (error) {
      for (const waiter of segment.waiters) waiter.reject(error);
    }
  }
}

const PAGE_REF = /^(pages\/[A-Za-z0-9._/-]+\.gz)#(\d+)\.(\d+)$/;

/** A page reference's parts: the segment's key and the page's byte range in it. */
export function parsePageRef(ref: string): { key: string; offset: number; length: number } {
  const m = PAGE_REF.exec(ref);
  if (!m) throw new Error(`not a stored page reference: ${JSON.stringify(ref)}`);
  return { key: m[1], offset: Number(m[2]), length: Number(m[3]) };
}

/** The index of a segment: `….gz` → `….index.jsonl`. */
export function indexKeyOf(segmentKey: string): string {
  return segmentKey.replace(/\.gz$/, '.index.jsonl');
}
