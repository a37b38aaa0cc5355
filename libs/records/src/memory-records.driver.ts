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
import { nearest, simhashBuckets, simhashLayout } from './simhash-bands';

/** The records in this process's memory: the embedded crawl's, gone when it exits. */
export class MemoryRecordsStore implements RecordsStore {
  private readonly pages = new Map<string, PageRecord>();
  private readonly owners = new Map<string, string>();
  private readonly duplicates = new Map<string, DuplicateRecord>();
  private readonly captures = new Map<string, Capture>();
  /** `<band>:<value>` → the simhashes filed there. */
  private readonly buckets = new Map<string, Set<string>>();
  /** `<bands>:<simhash>` → its owner. */
  private readonly simhashOwners = new Map<string, string>();

  async recordPages(pages: readonly FetchedPage[]): Promise<void> {
    for (const page of pages) this.pages.set(page.url, nextRecord(this.pages.get(page.url) ?? null, page));
  }

  async claimContent(claims: readonly ContentClaim[]): Promise<string[]> {
    return claims.map(({ contentHash, url }) => {
      const owner = this.owners.get(contentHash);
      if (owner !== undefined) return owner;
      this.owners.set(contentHash, url);
      return url;
    });
  }

  async ownersOf(contentHashes: readonly string[]): Promise<(string | null)[]> {
    return contentHashes.map((hash) => this.owners.get(hash) ?? null);
  }

  async recordDuplicates(duplicates: readonly DuplicateEntry[]): Promise<void> {
    for (const { url, duplicateOf } of duplicates) this.duplicates.set(url, { ...duplicateOf });
  }

  async lookup(urls: readonly string[]): Promise<UrlRecords[]> {
    return urls.map((url) => ({ page: copy(this.pages.get(url)), duplicateOf: copy(this.duplicates.get(url)) }));
  }

  async validators(urls: readonly string[]): Promise<(Validators | null)[]> {
    return urls.map((url) => {
      const record = this.pages.get(url);
      return record ? validatorsOf(record) : null;
    });
  }

  async recordCaptures(captures: readonly Capture[]): Promise<void> {
    for (const capture of captures) this.captures.set(capture.contentHash, { ...capture });
  }

  async capturesOf(contentHashes: readonly string[]): Promise<(Capture | null)[]> {
    return contentHashes.map((hash) => copy(this.captures.get(hash)));
  }

  async nearSimhashes(simhashes: readonly string[], maxDistance: number): Promise<(NearSimhash | null)[]> {
    const layout = simhashLayout(maxDistance);
    return simhashes.map((simhash) => {
      const candidates = new Set(simhashBuckets(layout, simhash).flatMap(([band, value]) => [...(this.buckets.get(`${band}:${value}`) ?? [])]));
      const found = nearest(
        simhash,
        maxDistance,
        [...candidates].map((candidate) => ({ simhash: candidate })),
      );
      return found && { ...found, owner: this.simhashOwners.get(`${layout.bands}:${found.simhash}`)! };
    });
  }

  async claimSimhashes(claims: readonly SimhashClaim[], maxDistance: number): Promise<string[]> {
    const layout = simhashLayout(maxDistance);
    return claims.map(({ simhash, owner }) => {
      const key = `${layout.bands}:${simhash}`;
      const kept = this.simhashOwners.get(key);
      if (kept !== undefined) return kept;
      const buckets = simhashBuckets(layout, simhash);
      this.simhashOwners.set(key, owner);
      for (const [band, value] of buckets) {
        const bucket = `${band}:${value}`;
        this.buckets.set(bucket, (this.buckets.get(bucket) ?? new Set()).add(simhash));
      }
      return owner;
    });
  }

  async close(): Promise<void> {}
}

/** A copy, so a caller changing what it was given changes nothing here. */
function copy<T extends object>(value: T | undefined): T | null {
  return value === undefined ? null : { ...value };
}
