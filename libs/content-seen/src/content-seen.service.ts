import { gzipSync } from 'node:zlib';
import { Inject, Injectable } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { ParsedPage } from '@crawler/contracts';
import { CONTENT_STORE, ContentStore } from '@crawler/content-store';
import { CrawlStats } from '@crawler/runtime';
import { SimhashIndex } from '@crawler/simhash';
import { STATE_STORE, StateStore } from '@crawler/state';

/**
 * What became of a page. `contentKey` is where the body is stored: the page's own for a new page, its
 * original's for a duplicate (written by the original's own check, which may still be in flight).
 */
export type SeenVerdict =
  | { kind: 'new'; duplicate: false; contentKey: string }
  | { kind: 'exact'; duplicate: true; originalUrl: string; contentKey: string }
  | { kind: 'near'; duplicate: true; originalUrl: string; contentKey: string; distance: number };

/** A `duplicates` record (URL → JSON): the original the page was recorded against, and how. */
export type DuplicateRecord =
  | { kind: 'exact'; original: string; contentKey: string }
  | { kind: 'near'; original: string; contentKey: string; distance: number };

/**
 * Object metadata is kept under this many bytes (names + values as the S3 driver encodes them, values
 * percent-encoded); S3 refuses more than 2 KB of user metadata, and the driver's name encoding adds a little.
 */
export const INLINE_METADATA_BYTES = 1536;

/**
 * Content seen? Exact duplicates by the SHA-256 of the normalised text; near duplicates by the 64-bit
 * simhash of its shingles within `contentSeen.nearDuplicateDistance` bits, looked up in a banded index
 * (libs/simhash). The first page with some content is stored (gzip, content-addressed, with its metadata)
 * and recorded in the URL store; a later duplicate is recorded (URL → original, in `duplicates`), counted
 * (`duplicate` for exact, `duplicate.near`), not stored and not mined for links.
 *
 * The near-duplicate index maps a simhash to the content hash of the page that owns it, so a near match
 * gives the original's content key directly and its URL through `original` (content hash → URL, claimed
 * before the simhash is indexed, so always there).
 *
 * Races between replicas: the exact check is one atomic claim. Two near duplicates checked at once can both
 * miss each other and both be stored (see SimhashIndex); a race costs a page kept, never a page lost.
 */
@Injectable()
export class ContentSeenService {
  private readonly store: StateStore;
  /** Absent when nearDuplicateDistance is 0 (exact duplicates only). */
  private readonly near?: SimhashIndex;

  constructor(
    @Inject(STATE_STORE) state: StateStore,
    @Inject(CONTENT_STORE) private readonly content: ContentStore,
    private readonly stats: CrawlStats,
    @Inject(CRAWLER_CONFIG) config: CrawlerConfig,
  ) {
    this.store = state.namespace('content-seen');
    const maxDistance = config.contentSeen.nearDuplicateDistance;
    if (maxDistance > 0) this.near = new SimhashIndex(this.store.namespace('simhash'), { maxDistance });
  }

  async check(page: ParsedPage, body: Buffer): Promise<SeenVerdict> {
    // One atomic claim: the first URL with this hash owns it. A redelivered job finds itself the owner,
    // and storing again is idempotent.
    const owner = await this.store.hashSetIfAbsent('original', page.contentHash, page.url);
    if (owner !== null && owner !== page.url) return this.exactDuplicate(page, owner);
    if (this.near) {
      const near = await this.nearOriginal(page);
      if (near) return this.recordDuplicate(page, near);
    }
    return this.storePage(page, body);
  }

  /**
   * A copy of `owner`'s text. The owner of a content hash was stored, unless it was itself found a near
   * duplicate: then this page is a near duplicate of the same original, as far from it.
   */
  private async exactDuplicate(page: ParsedPage, owner: string): Promise<SeenVerdict> {
    const ownerRecord = nearRecord(await this.store.hashGet('duplicates', owner));
    if (ownerRecord) return this.recordDuplicate(page, ownerRecord);
    return this.recordDuplicate(page, { kind: 'exact', original: owner, contentKey: contentKeyOf(page.contentHash) });
  }

  /** The near original of a page whose exact content is new; null after indexing the page's simhash. */
  private async nearOriginal(page: ParsedPage): Promise<DuplicateRecord | null> {
    const index = this.near as SimhashIndex;
    const match = await index.findNear(page.simhash);
    if (match && match.id !== page.contentHash) {
      const original = await this.originalOf(match.id);
      // Another content under this very URL is an earlier version of the page, not an original to defer to.
      if (original !== page.url) return { kind: 'near', original, contentKey: contentKeyOf(match.id), distance: match.distance };
    }
    // Nothing near (or the page itself, redelivered, or its earlier version): index the simhash. Another page
    // may have claimed this very simhash since the lookup; it is then the original, at distance 0.
    const owner = await index.add(page.simhash, page.contentHash);
    if (owner === null) return null;
    const original = await this.originalOf(owner);
    return original === page.url ? null : { kind: 'near', original, contentKey: contentKeyOf(owner), distance: 0 };
  }

  /** The URL that owns a content hash (claimed before that content's simhash was indexed). */
  private async originalOf(contentHash: string): Promise<string> {
    const url = await this.store.hashGet('original', contentHash);
    if (url === null) throw new Error(`content-seen: the simhash index names content ${contentHash}, which has no original URL`);
    return url;
  }

  private async recordDuplicate(page: ParsedPage, record: DuplicateRecord): Promise<SeenVerdict> {
    await this.store.hashSet('duplicates', page.url, JSON.stringify(record));
    await this.stats.count(record.kind === 'exact' ? 'duplicate' : 'duplicate.near');
    return record.kind === 'exact'
      ? { kind: 'exact', duplicate: true, originalUrl: record.original, contentKey: record.contentKey }
      : { kind: 'near', duplicate: true, originalUrl: record.original, contentKey: record.contentKey, distance: record.distance };
  }

  private async storePage(page: ParsedPage, body: Buffer): Promise<SeenVerdict> {
    const contentKey = contentKeyOf(page.contentHash);
    const metadata = pageMetadata(page, contentKey);
    const inline = inlineMetadata(metadata);
    if (inline.sidecar) {
      // Written first, so a body that points to its sidecar always has one.
      await this.content.put(inline.sidecar, Buffer.from(JSON.stringify(metadata)), { contentType: 'application/json' });
    }
    await this.content.put(contentKey, gzipSync(body), inline.meta);
    await this.store.hashSet(
      'urls',
      page.url,
      JSON.stringify({
        fetchedAt: page.fetchedAt,
        status: page.status,
        contentKey,
        simhash: page.simhash,
        etag: page.headers.etag,
        lastModified: page.headers['last-modified'],
      }),
    );
    await this.stats.count('stored');
    return { kind: 'new', duplicate: false, contentKey };
  }
}

/** Where a text's page is stored: content-addressed, sharded by the first byte of its hash. */
export function contentKeyOf(contentHash: string): string {
  return `pages/${contentHash.slice(0, 2)}/${contentHash}.html.gz`;
}

/** The full metadata of a stored page (what its sidecar holds when it does not fit the object's metadata). */
export interface PageMetadata {
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
  contentKey: string;
}

function pageMetadata(page: ParsedPage, contentKey: string): PageMetadata {
  return {
    url: page.url,
    fetchedAt: page.fetchedAt,
    status: page.status,
    contentType: page.contentType,
    charset: page.charset,
    title: page.title ?? '',
    truncated: page.truncated,
    headers: page.headers,
    contentHash: page.contentHash,
    simhash: page.simhash,
    contentKey,
  };
}

/**
 * The stored object's own metadata (string values). Everything fits in the common case: the fixed fields,
 * plus url, title and the response headers as JSON. When those would take the object past
 * INLINE_METADATA_BYTES (a long URL or title, many or large headers: S3 caps user metadata at 2 KB), the
 * object keeps the fixed fields and `metadata`, the key of a sidecar `pages/xx/<hash>.meta.json` holding
 * all of PageMetadata. One decision for the three variable fields, so a reader finds them all in one place.
 */
function inlineMetadata(metadata: PageMetadata): { meta: Record<string, string>; sidecar?: string } {
  const fixed: Record<string, string> = {
    fetchedAt: metadata.fetchedAt,
    status: String(metadata.status),
    contentType: metadata.contentType,
    charset: metadata.charset,
    contentHash: metadata.contentHash,
    simhash: metadata.simhash,
    truncated: String(metadata.truncated),
  };
  const full = { url: metadata.url, ...fixed, title: metadata.title, headers: JSON.stringify(metadata.headers) };
  if (encodedSize(full) <= INLINE_METADATA_BYTES) return { meta: full };
  const sidecar = metadata.contentKey.replace(/\.html\.gz$/, '.meta.json');
  return { meta: { ...fixed, metadata: sidecar }, sidecar };
}

/** Bytes of metadata as sent to S3: names, and values percent-encoded (as the S3 driver sends them). */
function encodedSize(meta: Record<string, string>): number {
  let size = 0;
  for (const [name, value] of Object.entries(meta)) size += name.length + encodeURIComponent(value).length;
  return size;
}

/** A `duplicates` record if it is a near one (records written before they were JSON are bare URLs, exact). */
function nearRecord(raw: string | null): Extract<DuplicateRecord, { kind: 'near' }> | null {
  if (raw === null || !raw.startsWith('{')) return null;
  const record = JSON.parse(raw) as DuplicateRecord;
  return record.kind === 'near' ? record : null;
}
