import { SimhashIndex } from '@crawler/simhash';
import { PartitionedHash, StateStore } from '@crawler/state';
import { jsonRecord, RecordsDataError } from './records-errors';
import {
  Capture,
  ContentClaim,
  DuplicateEntry,
  DuplicateRecord,
  FetchedPage,
  NearSimhash,
  nextRecord,
  PageRecord,
  RecordsStore,
  SimhashClaim,
  UrlRecords,
  Validators,
  validatorsOf,
} from './records-store';

export interface RedisRecordsOptions {
  /** The crawl's state store (its root: the records live in its `content-seen` and `warc` namespaces). */
  state: StateStore;
  /** Buckets of each hash: `hashBucketsFor(REDIS_URL)`, the count every reader and writer agrees on. */
  buckets: number;
}

/**
 * The records in Redis hashes, in the layout content-seen and the WARC archive always used, so a crawl begun
 * before this store resumes on its data: in namespace `content-seen`, `urls` (URL → JSON page record),
 * `original` (content hash → owner URL) and `duplicates` (URL → JSON DuplicateRecord, or a bare original URL
 * in records older than JSON); in namespace `warc`, `captures` (content hash → JSON capture). Each hash is a
 * PartitionedHash (split over a cluster's masters). The near-duplicate index is SimhashIndex's keys under
 * `content-seen:simhash` (one index per distance).
 *
 * Memory grows with every page: for small distributed crawls. A page's change history is read, then
 * written: two fetches of one URL at once could lose a count, which the frontier (one lease per URL) rules out.
 */
export class RedisRecordsStore implements RecordsStore {
  private readonly urls: PartitionedHash;
  private readonly original: PartitionedHash;
  private readonly duplicates: PartitionedHash;
  private readonly captures: PartitionedHash;
  private readonly simhash: StateStore;
  private readonly indexes = new Map<number, SimhashIndex>();

  constructor({ state, buckets }: RedisRecordsOptions) {
    const contentSeen = state.namespace('content-seen');
    this.urls = new PartitionedHash(contentSeen, 'urls', buckets);
    this.original = new PartitionedHash(contentSeen, 'original', buckets);
    this.duplicates = new PartitionedHash(contentSeen, 'duplicates', buckets);
    this.captures = new PartitionedHash(state.namespace('warc'), 'captures', buckets);
    this.simhash = contentSeen.namespace('simhash');
  }

  async recordPages(pages: readonly FetchedPage[]): Promise<void> {
    const urls = [...new Set(pages.map((page) => page.url))];
    const stored = await this.urls.getMany(urls);
    const previous = new Map(urls.map((url, at) => [url, parsePage(url, stored[at])]));
    const records = new Map<string, PageRecord>();
    // In order, so a URL named twice in the batch counts both fetches.
    for (const page of pages) records.set(page.url, nextRecord(records.get(page.url) ?? previous.get(page.url) ?? null, page));
    // The URL is the field: not repeated in the value.
    await this.urls.setMany(new Map([...records].map(([url, { url: _, ...record }]) => [url, JSON.stringify(record)])));
  }

  async claimContent(claims: readonly ContentClaim[]): Promise<string[]> {
    // Each claim is one atomic HSETNX; claims of one hash in a batch are made in order, so the first wins.
    const answers = new Array<string>(claims.length);
    const byHash = new Map<string, number[]>();
    claims.forEach(({ contentHash }, at) => byHash.set(contentHash, [...(byHash.get(contentHash) ?? []), at]));
    await Promise.all(
      [...byHash.values()].map(async (indexes) => {
        for (const at of indexes) {
          const { contentHash, url } = claims[at];
          answers[at] = (await this.original.setIfAbsent(contentHash, url)) ?? url;
        }
      }),
    );
    return answers;
  }

  ownersOf(contentHashes: readonly string[]): Promise<(string | null)[]> {
    return this.original.getMany(contentHashes);
  }

  async recordDuplicates(duplicates: readonly DuplicateEntry[]): Promise<void> {
    await this.duplicates.setMany(new Map(duplicates.map(({ url, duplicateOf }) => [url, JSON.stringify(duplicateOf)])));
  }

  async lookup(urls: readonly string[]): Promise<UrlRecords[]> {
    const [pages, duplicates] = await Promise.all([this.urls.getMany(urls), this.duplicates.getMany(urls)]);
    return urls.map((_, at) => ({ page: parsePage(urls[at], pages[at]), duplicateOf: parseDuplicate(urls[at], duplicates[at]) }));
  }

  async validators(urls: readonly string[]): Promise<(Validators | null)[]> {
    const pages = await this.urls.getMany(urls);
    return pages.map((raw, at) => {
      const record = parsePage(urls[at], raw);
      return record ? validatorsOf(record) : null;
    });
  }

  async recordCaptures(captures: readonly Capture[]): Promise<void> {
    await this.captures.setMany(new Map(captures.map(({ contentHash, url, date, digest, recordId }) => [contentHash, JSON.stringify({ url, date, digest, recordId })])));
  }

  async capturesOf(contentHashes: readonly string[]): Promise<(Capture | null)[]> {
    const raws = await this.captures.getMany(contentHashes);
    return raws.map((raw, at) =>
      raw === null ? null : { contentHash: contentHashes[at], ...jsonRecord<Omit<Capture, 'contentHash'>>('warc:captures', 'content hash', contentHashes[at], raw) },
    );
  }

  async nearSimhashes(simhashes: readonly string[], maxDistance: number): Promise<(NearSimhash | null)[]> {
    const index = this.indexFor(maxDistance);
    return Promise.all(
      simhashes.map(async (simhash) => {
        const match = await index.findNear(simhash);
        return match && { simhash: match.simhash, distance: match.distance, owner: match.id };
      }),
    );
  }

  async claimSimhashes(claims: readonly SimhashClaim[], maxDistance: number): Promise<string[]> {
    const index = this.indexFor(maxDistance);
    // Claims of one simhash in a batch are made in order, so the first wins; each is atomic (SimhashIndex.add).
    const answers = new Array<string>(claims.length);
    const bySimhash = new Map<string, number[]>();
    claims.forEach(({ simhash }, at) => bySimhash.set(simhash, [...(bySimhash.get(simhash) ?? []), at]));
    await Promise.all(
      [...bySimhash.values()].map(async (indexes) => {
        for (const at of indexes) answers[at] = (await index.add(claims[at].simhash, claims[at].owner)) ?? claims[at].owner;
      }),
    );
    return answers;
  }

  private indexFor(maxDistance: number): SimhashIndex {
    let index = this.indexes.get(maxDistance);
    if (!index) this.indexes.set(maxDistance, (index = new SimhashIndex(this.simhash, { maxDistance })));
    return index;
  }

  /** The state store is the crawl's, closed by its owner. */
  async close(): Promise<void> {}
}

/** A `urls` record; those written before the change history was kept count no change since their fetch. */
function parsePage(url: string, raw: string | null): PageRecord | null {
  if (raw === null) return null;
  const record = jsonRecord<Omit<PageRecord, 'url' | 'changes' | 'changedAt'> & Partial<PageRecord>>('content-seen:urls', 'url', url, raw);
  if (typeof record.fetchedAt !== 'string' || Number.isNaN(Date.parse(record.fetchedAt))) {
    throw new RecordsDataError('content-seen:urls', 'url', url, `fetchedAt is ${JSON.stringify(record.fetchedAt)}, not a time`);
  }
  return { url, ...record, changes: record.changes ?? 0, changedAt: record.changedAt ?? record.fetchedAt };
}

/** A `duplicates` record; those written before they were JSON are a bare original URL (an exact duplicate). */
function parseDuplicate(url: string, raw: string | null): DuplicateRecord | null {
  if (raw === null) return null;
  if (!raw.startsWith('{')) return { kind: 'exact', original: raw };
  const record = jsonRecord<{ kind?: unknown }>('content-seen:duplicates', 'url', url, raw);
  if (record.kind !== 'exact' && record.kind !== 'near') {
    throw new RecordsDataError('content-seen:duplicates', 'url', url, `kind is ${JSON.stringify(record.kind)}, not "exact" or "near"`);
  }
  return record as DuplicateRecord;
}
