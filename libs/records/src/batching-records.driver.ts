import { LingerBatcher } from '@crawler/batching';
import type { Capture, ContentClaim, DuplicateEntry, FetchedPage, NearSimhash, RecordsStore, SimhashClaim, UrlRecords, Validators } from './records-store';

export interface RecordsBatchOptions {
  /**
   * How long the first call of a batch waits for others to join it (RECORDS_BATCH_LINGER_MS); 0 = only
   * the calls made in the same turn of the event loop. @defaultValue 5
   */
  lingerMs?: number;
  /** A batch is sent as soon as it holds this many items, linger or not (RECORDS_BATCH_MAX). @defaultValue 500 */
  maxItems?: number;
}

/**
 * Any RecordsStore, with the calls of concurrent callers (content-seen's handlers, each with one page)
 * coalesced: each method's calls made within `lingerMs` of the first, up to `maxItems` items, go to the
 * store as one call (one statement in PostgreSQL, instead of one per page). Every caller is answered its
 * own share of the batch's result, in the order of its own items; a batch that fails rejects each of its
 * callers with the error, so each job retries.
 *
 * Calls keep their order within a batch (the store's batch semantics hold across its callers: of two claims
 * of one content hash, the earlier call's wins). Batches in flight together have no order between them, as
 * concurrent callers had none; a caller that awaited its write finds it in any later read.
 */
export class BatchingRecordsStore implements RecordsStore {
  private readonly batchers: LingerBatcher<unknown, unknown>[] = [];
  private readonly pages: LingerBatcher<FetchedPage, void>;
  private readonly claims: LingerBatcher<ContentClaim, string>;
  private readonly owners: LingerBatcher<string, string | null>;
  private readonly duplicates: LingerBatcher<DuplicateEntry, void>;
  private readonly lookups: LingerBatcher<string, UrlRecords>;
  private readonly validatorReads: LingerBatcher<string, Validators | null>;
  private readonly captures: LingerBatcher<Capture, void>;
  private readonly captureReads: LingerBatcher<string, Capture | null>;
  private readonly settings: { lingerMs: number; maxItems: number };

  constructor(
    private readonly store: RecordsStore,
    options: RecordsBatchOptions = {},
  ) {
    const settings = (this.settings = { lingerMs: options.lingerMs ?? 5, maxItems: options.maxItems ?? 500 });
    // biome-ignore lint/suspicious/noConfusingVoidType: a writer with nothing to answer per item is a plain async function, which returns Promise<void>
    const batcher = <I, O>(run: (items: I[]) => Promise<O[] | void>): LingerBatcher<I, O> => {
      const made = new LingerBatcher<I, O>(run, settings);
      this.batchers.push(made as LingerBatcher<unknown, unknown>);
      return made;
    };
    this.pages = batcher((items) => store.recordPages(items));
    this.claims = batcher((items) => store.claimContent(items));
    this.owners = batcher((items) => store.ownersOf(items));
    this.duplicates = batcher((items) => store.recordDuplicates(items));
    this.lookups = batcher((items) => store.lookup(items));
    this.validatorReads = batcher((items) => store.validators(items));
    this.captures = batcher((items) => store.recordCaptures(items));
    this.captureReads = batcher((items) => store.capturesOf(items));
    // Readiness asks the store under the batches, where there is one to ask (PostgreSQL's ping).
    if (store.ping) this.ping = () => store.ping!();
  }

  readonly ping?: () => Promise<void>;

  async recordPages(pages: readonly FetchedPage[]): Promise<void> {
    await this.pages.addAll(pages);
  }

  claimContent(claims: readonly ContentClaim[]): Promise<string[]> {
    return this.claims.addAll(claims);
  }

  ownersOf(contentHashes: readonly string[]): Promise<(string | null)[]> {
    return this.owners.addAll(contentHashes);
  }

  async recordDuplicates(duplicates: readonly DuplicateEntry[]): Promise<void> {
    await this.duplicates.addAll(duplicates);
  }

  lookup(urls: readonly string[]): Promise<UrlRecords[]> {
    return this.lookups.addAll(urls);
  }

  validators(urls: readonly string[]): Promise<(Validators | null)[]> {
    return this.validatorReads.addAll(urls);
  }

  async recordCaptures(captures: readonly Capture[]): Promise<void> {
    await this.captures.addAll(captures);
  }

  capturesOf(contentHashes: readonly string[]): Promise<(Capture | null)[]> {
    return this.captureReads.addAll(contentHashes);
  }

  /** Batched per distance: each distance is an index of its own (a process uses one). */
  nearSimhashes(simhashes: readonly string[], maxDistance: number): Promise<(NearSimhash | null)[]> {
    return this.perDistance(this.nearReads, maxDistance, (items) => this.store.nearSimhashes(items, maxDistance)).addAll(simhashes);
  }

  claimSimhashes(claims: readonly SimhashClaim[], maxDistance: number): Promise<string[]> {
    return this.perDistance(this.simhashClaims, maxDistance, (items) => this.store.claimSimhashes(items, maxDistance)).addAll(claims);
  }

  private readonly nearReads = new Map<number, LingerBatcher<string, NearSimhash | null>>();
  private readonly simhashClaims = new Map<number, LingerBatcher<SimhashClaim, string>>();

  private perDistance<I, O>(batchers: Map<number, LingerBatcher<I, O>>, maxDistance: number, run: (items: I[]) => Promise<O[]>): LingerBatcher<I, O> {
    let made = batchers.get(maxDistance);
    if (!made) {
      made = new LingerBatcher<I, O>(run, this.settings);
      this.batchers.push(made as LingerBatcher<unknown, unknown>);
      batchers.set(maxDistance, made);
    }
    return made;
  }

  /** Sends what is waiting, waits for every batch in flight, then closes the store. */
  async close(): Promise<void> {
    await Promise.all(this.batchers.map((b) => b.drain()));
    await this.store.close();
  }
}
