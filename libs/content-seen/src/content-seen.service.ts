import { Inject, Injectable } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { ParsedPage } from '@crawler/contracts';
import { PAGE_STORE, PageStore, StagedBody, StoredPageMeta } from '@crawler/content-store';
import { CrawlStats } from '@crawler/runtime';
import { DuplicateRecord, RECORDS_STORE, RecordsStore } from '@crawler/records';

/**
 * What became of a page: stored under `contentKey` (a page store reference) when new; recorded against its
 * original when a duplicate (whose own record, which may still be in flight, says where it is stored).
 */
export type SeenVerdict = { kind: 'new'; duplicate: false; contentKey: string } | DuplicateVerdict;

type DuplicateVerdict = { kind: 'exact'; duplicate: true; originalUrl: string } | { kind: 'near'; duplicate: true; originalUrl: string; distance: number };

/** What `decide` says: a new page (for `storePage`), or a duplicate, already recorded. */
export type SeenDecision = { kind: 'new'; duplicate: false } | DuplicateVerdict;

/**
 * Content seen? Exact duplicates by the SHA-256 of the normalised text; near duplicates by the 64-bit
 * simhash of its shingles within `contentSeen.nearDuplicateDistance` bits, looked up in the records' banded
 * near-duplicate index (RecordsStore.nearSimhashes). The first page with some content is stored (compressed, with its metadata, in the page store's
 * segments) and its record kept (the RecordsStore: memory, Redis or PostgreSQL); a later duplicate is
 * recorded against its original, counted (`duplicate` for exact, `duplicate.near`), not stored and not
 * mined for links.
 *
 * The content hash is the page's identity: the records map it to the URL that owns it (claimed atomically,
 * before the simhash is indexed), and the near-duplicate index maps a simhash to the content hash of the
 * page that owns it.
 *
 * Races between replicas: the exact check is one atomic claim. Two near duplicates checked at once can both
 * miss each other and both be stored (both looked up before either was indexed); a race costs a page kept,
 * never a page lost.
 */
@Injectable()
export class ContentSeenService {
  /** Bits within which a simhash is near; 0: exact duplicates only. */
  private readonly maxDistance: number;

  constructor(
    @Inject(RECORDS_STORE) private readonly records: RecordsStore,
    @Inject(PAGE_STORE) private readonly pages: PageStore,
    private readonly stats: CrawlStats,
    @Inject(CRAWLER_CONFIG) config: CrawlerConfig,
  ) {
    this.maxDistance = config.contentSeen.nearDuplicateDistance;
  }

  /** Decides, then stores a new page: `decide` and `storePage` in one. */
  async check(page: ParsedPage, staged: StagedBody): Promise<SeenVerdict> {
    const decision = await this.decide(page);
    return decision.duplicate ? decision : { ...decision, contentKey: await this.storePage(page, staged) };
  }

  /** New or duplicate? A duplicate is recorded (URL → original) and counted; a new page is then stored (`storePage`). */
  async decide(page: ParsedPage): Promise<SeenDecision> {
    // One atomic claim: the first URL with this hash owns it. A redelivered job finds itself the owner,
    // and storing again is harmless.
    const [owner] = await this.records.claimContent([{ contentHash: page.contentHash, url: page.url }]);
    if (owner !== page.url) return this.exactDuplicate(page, owner);
    if (this.maxDistance > 0) {
      const near = await this.nearOriginal(page);
      if (near) return this.recordDuplicate(page, near);
    }
    return { kind: 'new', duplicate: false };
  }

  /**
   * A copy of `owner`'s text. The owner of a content hash was stored, unless it was itself found a near
   * duplicate: then this page is a near duplicate of the same original, as far from it.
   */
  private async exactDuplicate(page: ParsedPage, owner: string): Promise<DuplicateVerdict> {
    const [{ duplicateOf }] = await this.records.lookup([owner]);
    return this.recordDuplicate(page, duplicateOf?.kind === 'near' ? duplicateOf : { kind: 'exact', original: owner });
  }

  /** The near original of a page whose exact content is new; null after indexing the page's simhash. */
  private async nearOriginal(page: ParsedPage): Promise<DuplicateRecord | null> {
    const [match] = await this.records.nearSimhashes([page.simhash], this.maxDistance);
    if (match && match.owner !== page.contentHash) {
      const original = await this.originalOf(match.owner);
      // Another content under this very URL is an earlier version of the page, not an original to defer to.
      if (original !== page.url) return { kind: 'near', original, distance: match.distance };
    }
    // Nothing near (or the page itself, redelivered, or its earlier version): index the simhash. Another page
    // may have claimed this very simhash since the lookup; it is then the original, at distance 0.
    const [owner] = await this.records.claimSimhashes([{ simhash: page.simhash, owner: page.contentHash }], this.maxDistance);
    if (owner === page.contentHash) return null;
    const original = await this.originalOf(owner);
    return original === page.url ? null : { kind: 'near', original, distance: 0 };
  }

  /** The URL that owns a content hash (claimed before that content's simhash was indexed). */
  private async originalOf(contentHash: string): Promise<string> {
    const [url] = await this.records.ownersOf([contentHash]);
    if (url === null) throw new Error(`content-seen: the simhash index names content ${contentHash}, which has no original URL`);
    return url;
  }

  private async recordDuplicate(page: ParsedPage, record: DuplicateRecord): Promise<DuplicateVerdict> {
    await this.records.recordDuplicates([{ url: page.url, duplicateOf: record }]);
    await this.stats.count(record.kind === 'exact' ? 'duplicate' : 'duplicate.near');
    return record.kind === 'exact'
      ? { kind: 'exact', duplicate: true, originalUrl: record.original }
      : { kind: 'near', duplicate: true, originalUrl: record.original, distance: record.distance };
  }

  /** Stores a new page (compressed, with its metadata) and records it in the URL store; answers its reference. */
  async storePage(page: ParsedPage, staged: StagedBody): Promise<string> {
    // Staged bodies come compressed already (a bundle's members) or are compressed now, off the event loop.
    const contentKey = await this.pages.store(await staged.compressed(), pageMetadata(page));
    await this.records.recordPages([
      {
        url: page.url,
        fetchedAt: page.fetchedAt,
        status: page.status,
        contentKey,
        contentHash: page.contentHash,
        simhash: page.simhash,
        etag: page.headers.etag,
        lastModified: page.headers['last-modified'],
      },
    ]);
    await this.stats.count('stored');
    return contentKey;
  }
}

function pageMetadata(page: ParsedPage): StoredPageMeta {
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
    ...(page.via ? { via: page.via } : {}),
  };
}
