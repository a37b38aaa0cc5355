import { randomBytes } from 'node:crypto';
import { LingerBatcher } from '@crawler/batching';
import { type Codec, type Compressed, codecOfKey, decompressSync, extensionOf } from './codec';
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
 * Where content-seen keeps new pages: compressed (gzip or zstd), with their metadata, addressed by a reference
 * that the URL store records (`contentKey`).
 */
export interface PageStore {
  /** Stores a page, compressed on its own; resolves, once it is written, to the page's reference. */
  store(page: Compressed, meta: StoredPageMeta): Promise<string>;
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

interface PendingPage {
  bytes: Buffer;
  meta: StoredPageMeta;
}

/**
 * Pages stored together within `lingerMs` form one segment, as web archives store them (WARC files, Nutch
 * segments): `pages/<date>/<id>.gz` is the concatenation of the pages' gzip members (itself a valid gzip
 * file), `pages/<date>/<id>.zst` that of their zstd frames (a valid zstd file), and
 * `pages/<date>/<id>.index.jsonl` holds one line per page: its offset and length in the segment and its
 * metadata. A page's reference is `pages/<date>/<id>.gz#<offset>.<length>` (or `.zst#…`), read with one
 * ranged GET. Two objects per segment instead of one per page: an object store's cost is per request, and a
 * crawl stores hundreds of pages a second.
 *
 * A segment holds one codec, the one its extension names: pages come compressed, and those of another codec
 * than the rest (staged before the crawl switched codecs) go to a segment of their own. Every reference is
 * read by the codec it names, whatever this process writes.
 *
 * A page is acknowledged only once its segment and index are written (the caller awaits `store`), so a
 * crash loses no acknowledged page; a message redelivered after a crash stores its page again, in another
 * segment.
 */
export class SegmentedPageStore implements PageStore {
  private readonly instance = randomBytes(6).toString('base64url').replace(/[-_]/g, 'x');
  private sequence = 0;
  private readonly segments = new Map<Codec, LingerBatcher<PendingPage, string>>();

  constructor(
    private readonly content: ContentStore,
    private readonly options: SegmentedPageStoreOptions = {},
  ) {}

  store(page: Compressed, meta: StoredPageMeta): Promise<string> {
    return this.segmentsOf(page.codec).add({ bytes: page.bytes, meta });
  }

  async read(ref: string, options: { meta?: boolean } = {}): Promise<StoredPage | null> {
    const at = parsePageRef(ref);
    const member = await this.content.getRange(at.key, at.offset, at.length);
    if (!member || member.length < at.length) return null;
    const page: StoredPage = { body: decompressSync(member, codecOfKey(at.key)) };
    if (options.meta) page.meta = await this.meta(at.key, at.offset);
    return page;
  }

  async close(): Promise<void> {
    await Promise.all([...this.segments.values()].map((segments) => segments.drain()));
  }

  private segmentsOf(codec: Codec): LingerBatcher<PendingPage, string> {
    let segments = this.segments.get(codec);
    if (!segments) {
      segments = new LingerBatcher((pages) => this.write(codec, pages), {
        lingerMs: this.options.lingerMs ?? 50,
        maxItems: this.options.maxPages ?? 256,
        maxBytes: this.options.maxBytes ?? 16 * 1024 * 1024,
        bytesOf: (page) => page.bytes.length,
      });
      this.segments.set(codec, segments);
    }
    return segments;
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

  /** Writes one segment and its index; answers each page's reference. */
  private async write(codec: Codec, pages: PendingPage[]): Promise<string[]> {
    const day = new Date().toISOString().slice(0, 10);
    const key = `pages/${day}/${this.instance}-${(this.sequence++).toString(36)}${extensionOf(codec)}`;
    let offset = 0;
    const refs: string[] = [];
    const lines: string[] = [];
    for (const { bytes, meta } of pages) {
      refs.push(`${key}#${offset}.${bytes.length}`);
      lines.push(JSON.stringify({ offset, length: bytes.length, meta }));
      offset += bytes.length;
    }
    await this.content.put(key, Buffer.concat(pages.map((page) => page.bytes)), { pages: String(pages.length), codec });
    await this.content.put(indexKeyOf(key), Buffer.from(`${lines.join('\n')}\n`), { contentType: 'application/x-ndjson' });
    return refs;
  }
}

const PAGE_REF = /^(pages\/[A-Za-z0-9._/-]+\.(?:gz|zst))#(\d+)\.(\d+)$/;

/** A page reference's parts: the segment's key and the page's byte range in it. */
export function parsePageRef(ref: string): { key: string; offset: number; length: number } {
  const m = PAGE_REF.exec(ref);
  if (!m) throw new Error(`not a stored page reference: ${JSON.stringify(ref)}`);
  return { key: m[1], offset: Number(m[2]), length: Number(m[3]) };
}

/** The index of a segment: `….gz` or `….zst` → `….index.jsonl`. */
export function indexKeyOf(segmentKey: string): string {
  return segmentKey.replace(/\.(gz|zst)$/, '.index.jsonl');
}
