import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DiskMap } from './disk-map';
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
import { SimhashBandIndex } from './simhash-band-index';
import { nearest, simhashLayout } from './simhash-bands';

/**
 * The embedded crawl's records, in files under a directory of its `--out` (one JSON-lines file per map, see
 * DiskMap), so the process's memory does not grow with a record a page: what stays in memory is a few dozen
 * bytes a record (where its line is) and the near-duplicate index's simhashes (SimhashBandIndex). The files are
 * this crawl's: opening the store starts them empty, as a memory store starts.
 */
export class FileRecordsStore implements RecordsStore {
  private readonly pages: DiskMap<PageRecord>;
  private readonly owners: DiskMap<string>;
  private readonly duplicates: DiskMap<DuplicateRecord>;
  private readonly captures: DiskMap<Capture>;
  /** `<bands>:<simhash>` → its owner. */
  private readonly simhashOwners: DiskMap<string>;
  private readonly indexes = new Map<number, SimhashBandIndex>();

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
    this.pages = new DiskMap(join(dir, 'pages.jsonl'));
    this.owners = new DiskMap(join(dir, 'content-owners.jsonl'));
    this.duplicates = new DiskMap(join(dir, 'duplicates.jsonl'));
    this.captures = new DiskMap(join(dir, 'captures.jsonl'));
    this.simhashOwners = new DiskMap(join(dir, 'simhash-owners.jsonl'));
  }

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
    for (const { url, duplicateOf } of duplicates) this.duplicates.set(url, duplicateOf);
  }

  async lookup(urls: readonly string[]): Promise<UrlRecords[]> {
    return urls.map((url) => ({ page: this.pages.get(url) ?? null, duplicateOf: this.duplicates.get(url) ?? null }));
  }

  async validators(urls: readonly string[]): Promise<(Validators | null)[]> {
    return urls.map((url) => {
      const record = this.pages.get(url);
      return record ? validatorsOf(record) : null;
    });
  }

  async recordCaptures(captures: readonly Capture[]): Promise<void> {
    for (const capture of captures) this.captures.set(capture.contentHash, capture);
  }

  async capturesOf(contentHashes: readonly string[]): Promise<(Capture | null)[]> {
    return contentHashes.map((hash) => this.captures.get(hash) ?? null);
  }

  async nearSimhashes(simhashes: readonly string[], maxDistance: number): Promise<(NearSimhash | null)[]> {
    const layout = simhashLayout(maxDistance);
    const index = this.indexes.get(maxDistance);
    return simhashes.map((simhash) => {
      const found = index && nearest(simhash, maxDistance, index.candidates(simhash));
      return found ? { ...found, owner: this.simhashOwners.get(`${layout.bands}:${found.simhash}`)! } : null;
    });
  }

  async claimSimhashes(claims: readonly SimhashClaim[], maxDistance: number): Promise<string[]> {
    const layout = simhashLayout(maxDistance);
    return claims.map(({ simhash, owner }) => {
      const key = `${layout.bands}:${simhash}`;
      const kept = this.simhashOwners.get(key);
      if (kept !== undefined) return kept;
      this.simhashOwners.set(key, owner);
      this.indexFor(maxDistance).add(simhash);
      return owner;
    });
  }

  async close(): Promise<void> {
    for (const map of [this.pages, this.owners, this.duplicates, this.captures, this.simhashOwners]) map.close();
  }

  private indexFor(maxDistance: number): SimhashBandIndex {
    let index = this.indexes.get(maxDistance);
    if (!index) this.indexes.set(maxDistance, (index = new SimhashBandIndex(simhashLayout(maxDistance))));
    return index;
  }
}
