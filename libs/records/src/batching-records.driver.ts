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
  private readonly batchers: Batcher<unknown, unknown>[] = [];
  private readonly pages: Batcher<FetchedPage, void>;
  private readonly claims: Batcher<ContentClaim, string>;
  private readonly owners: Batcher<string, string | null>;
  private readonly duplicates: Batcher<DuplicateEntry, void>;
  private readonly lookups: Batcher<string, UrlRecords>;
  private readonly validatorReads: Batcher<string, Validators | null>;
  private readonly captures: Batcher<Capture, void>;
  private readonly captureReads: Batcher<string, Capture | null>;
  private readonly settings: { lingerMs: number; maxItems: number };

  constructor(
    private readonly store: RecordsStore,
    options: RecordsBatchOptions = {},
  ) {
    const settings = (this.settings = { lingerMs: options.lingerMs ?? 5, maxItems: options.maxItems ?? 500 });
    const batcher = <I, O>(run: (items: I[]) => Promise<O[] | void>): Batcher<I, O> => {
      const made = new Batcher<I, O>(run, settings);
      this.batchers.push(made as Batcher<unknown, unknown>);
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
    await this.pages.call(pages);
  }

  claimContent(claims: readonly ContentClaim[]): Promise<string[]> {
    return this.claims.call(claims);
  }

  ownersOf(contentHashes: readonly string[]): Promise<(string | null)[]> {
    return this.owners.call(contentHashes);
  }

  async recordDuplicates(duplicates: readonly DuplicateEntry[]): Promise<void> {
    await this.duplicates.call(duplicates);
  }

  lookup(urls: readonly string[]): Promise<UrlRecords[]> {
    return this.lookups.call(urls);
  }

  validators(urls: readonly string[]): Promise<(Validators | null)[]> {
    return this.validatorReads.call(urls);
  }

  async recordCaptures(captures: readonly Capture[]): Promise<void> {
    await this.captures.call(captures);
  }

  capturesOf(contentHashes: readonly string[]): Promise<(Capture | null)[]> {
    return this.captureReads.call(contentHashes);
  }

  /** Batched per distance: each distance is an index of its own (a process uses one). */
  nearSimhashes(simhashes: readonly string[], maxDistance: number): Promise<(NearSimhash | null)[]> {
    return this.perDistance(this.nearReads, maxDistance, (items) => this.store.nearSimhashes(items, maxDistance)).call(simhashes);
  }

  claimSimhashes(claims: readonly SimhashClaim[], maxDistance: number): Promise<string[]> {
    return this.perDistance(this.simhashClaims, maxDistance, (items) => this.store.claimSimhashes(items, maxDistance)).call(claims);
  }

  private readonly nearReads = new Map<number, Batcher<string, NearSimhash | null>>();
  private readonly simhashClaims = new Map<number, Batcher<SimhashClaim, string>>();

  private perDistance<I, O>(batchers: Map<number, Batcher<I, O>>, maxDistance: number, run: (items: I[]) => Promise<O[]>): Batcher<I, O> {
    let made = batchers.get(maxDistance);
    if (!made) {
      made = new Batcher<I, O>(run, this.settings);
      this.batchers.push(made as Batcher<unknown, unknown>);
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

interface Waiting<O> {
  from: number;
  count: number;
  resolve: (results: O[]) => void;
  reject: (error: unknown) => void;
}

interface Batch<I, O> {
  items: I[];
  callers: Waiting<O>[];
  /** Stops the linger's timer (the batch is being sent for another reason). */
  cancel: () => void;
}

/** One method's batches: the one filling, and those in flight. */
class Batcher<I, O> {
  private filling: Batch<I, O> | null = null;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly run: (items: I[]) => Promise<O[] | void>,
    private readonly settings: { lingerMs: number; maxItems: number },
  ) {}

  call(items: readonly I[]): Promise<O[]> {
    if (items.length === 0) return Promise.resolve([]);
    return new Promise<O[]>((resolve, reject) => {
      const batch = (this.filling ??= this.open());
      batch.callers.push({ from: batch.items.length, count: items.length, resolve, reject });
      for (const item of items) batch.items.push(item);
      if (batch.items.length >= this.settings.maxItems) this.send();
    });
  }

  async drain(): Promise<void> {
    this.send();
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  private open(): Batch<I, O> {
    const { lingerMs } = this.settings;
    if (lingerMs > 0) {
      const timer = setTimeout(() => this.send(), lingerMs);
      return { items: [], callers: [], cancel: () => clearTimeout(timer) };
    }
    const immediate = setImmediate(() => this.send());
    return { items: [], callers: [], cancel: () => clearImmediate(immediate) };
  }

  private send(): void {
    const batch = this.filling;
    if (!batch) return;
    this.filling = null;
    batch.cancel();
    const sent: Promise<void> = this.answer(batch).finally(() => this.inFlight.delete(sent));
    this.inFlight.add(sent);
  }

  private async answer({ items, callers }: Batch<I, O>): Promise<void> {
    let results: O[] | void;
    try {
      results = await this.run(items);
    } catch (error) {
      for (const caller of callers) caller.reject(error);
      return;
    }
    for (const { from, count, resolve } of callers) resolve(results ? results.slice(from, from + count) : []);
  }
}
