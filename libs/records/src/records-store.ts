/**
 * The per-page records of a crawl: one row per stored URL, per content hash, per duplicate and per WARC
 * capture. They grow with every page for ever, so at scale they live in a database on disk (PostgreSQL), not
 * in Redis memory. Every write takes a batch (one round trip, one statement in PostgreSQL); every read
 * takes many keys and answers in their order, null where there is nothing.
 *
 * Drivers: memory (embedded), Redis (the keys content-seen and the WARC archive always kept, so a crawl begun
 * before this store resumes on its data), PostgreSQL (hash-partitioned tables). See docs/content.md. The
 * near-duplicate index is a per-page record too (one simhash per new page).
 */
export interface RecordsStore {
  /** Records fetched and stored pages, by URL (a URL fetched again is overwritten; its change history kept). */
  recordPages(pages: readonly FetchedPage[]): Promise<void>;
  /**
   * Claims each content hash for its URL, atomically: the first URL to claim a hash owns it for ever. Answers
   * each claim's owner (the claim's own URL when it won, or had already). Within one batch the first claim wins.
   */
  claimContent(claims: readonly ContentClaim[]): Promise<string[]>;
  /** The URL that owns each content hash. */
  ownersOf(contentHashes: readonly string[]): Promise<(string | null)[]>;
  /** Records duplicate pages against their originals (a URL recorded again is overwritten). */
  recordDuplicates(duplicates: readonly DuplicateEntry[]): Promise<void>;
  /** What is recorded of each URL: its stored page, or the original it duplicates, or neither. */
  lookup(urls: readonly string[]): Promise<UrlRecords[]>;
  /** What a refetch of each URL sends (If-None-Match, If-Modified-Since) and how often its content changed. */
  validators(urls: readonly string[]): Promise<(Validators | null)[]>;
  /** Records the WARC capture holding each content hash's payload (overwrites). */
  recordCaptures(captures: readonly Capture[]): Promise<void>;
  /** The WARC capture of each content hash, for revisit records. */
  capturesOf(contentHashes: readonly string[]): Promise<(Capture | null)[]>;
  /** Whether its server answers, for readiness (drivers with a server of their own: PostgreSQL). */
  ping?(): Promise<void>;
  /**
   * The near-duplicate lookup: the indexed simhash nearest to each simhash within `maxDistance` bits (0…15),
   * with its owner; null where there is none. Among equally near ones, the smallest simhash. Each distance is
   * an index of its own (banded by it: see simhash-bands.ts).
   */
  nearSimhashes(simhashes: readonly string[], maxDistance: number): Promise<(NearSimhash | null)[]>;
  /**
   * Indexes each simhash for its owner (a content hash), atomically: the first owner of a simhash keeps it,
   * and whoever finds the simhash in a lookup finds that owner. Answers each claim's owner (the claim's own
   * when it won, or had already: a redelivery finds itself). Within one batch the first claim wins.
   */
  claimSimhashes(claims: readonly SimhashClaim[], maxDistance: number): Promise<string[]>;
  close(): Promise<void>;
}

export const RECORDS_STORE = Symbol('RECORDS_STORE');

/** A stored page as content-seen records it. */
export interface FetchedPage {
  url: string;
  /** ISO 8601, millisecond precision. */
  fetchedAt: string;
  status: number;
  /** Where the body is, in the page store. */
  contentKey: string;
  contentHash: string;
  simhash?: string;
  etag?: string;
  lastModified?: string;
}

/** A stored page's record: what was fetched, and its change history. */
export interface PageRecord extends Omit<FetchedPage, 'contentHash'> {
  /** Absent on records written before it was kept (Redis). */
  contentHash?: string;
  /** How many fetches found content other than the one before (0: unchanged since first fetched). */
  changes: number;
  /** When the content last changed (its first fetch when it never did). */
  changedAt: string;
}

export type Validators = Pick<PageRecord, 'fetchedAt' | 'etag' | 'lastModified' | 'contentHash' | 'changes' | 'changedAt'>;

export interface ContentClaim {
  contentHash: string;
  url: string;
}

export interface SimhashClaim {
  /** 16 lowercase hex digits. */
  simhash: string;
  owner: string;
}

export interface NearSimhash {
  /** The indexed simhash nearest to the one looked up. */
  simhash: string;
  /** Bits in which they differ, ≤ maxDistance. */
  distance: number;
  owner: string;
}

/** The original a duplicate was recorded against, and how (the original's own record says where it is stored). */
export type DuplicateRecord = { kind: 'exact'; original: string } | { kind: 'near'; original: string; distance: number };

export interface DuplicateEntry {
  url: string;
  duplicateOf: DuplicateRecord;
}

export interface UrlRecords {
  page: PageRecord | null;
  duplicateOf: DuplicateRecord | null;
}

/** The WARC response record that holds a payload. */
export interface Capture {
  /** What it is kept under: a content hash (content-seen), or `body:<body hash>` (the downloader's, with WARC_ALL). */
  contentHash: string;
  url: string;
  /** WARC-Date of the record. */
  date: string;
  /** WARC-Payload-Digest. */
  digest: string;
  /** WARC-Record-ID. */
  recordId: string;
}

/** The record of a page fetched again: its change history follows on from the previous record's. */
export function nextRecord(previous: PageRecord | null, page: FetchedPage): PageRecord {
  // A record kept before content hashes were (Redis) cannot tell: taken as unchanged.
  const changed = previous?.contentHash !== undefined && previous.contentHash !== page.contentHash;
  return {
    ...withoutUndefined(page),
    changes: (previous?.changes ?? 0) + (changed ? 1 : 0),
    changedAt: previous && !changed ? previous.changedAt : page.fetchedAt,
  };
}

export function validatorsOf(record: Validators): Validators {
  const { fetchedAt, etag, lastModified, contentHash, changes, changedAt } = record;
  return withoutUndefined({ fetchedAt, etag, lastModified, contentHash, changes, changedAt });
}

/** The last of each key's items, in the order of their last appearance: one row per key for an upsert. */
export function lastByKey<T>(items: readonly T[], keyOf: (item: T) => string): T[] {
  const last = new Map<string, T>();
  for (const item of items) {
    const key = keyOf(item);
    last.delete(key);
    last.set(key, item);
  }
  return [...last.values()];
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
