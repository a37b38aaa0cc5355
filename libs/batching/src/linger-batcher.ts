export interface LingerBatcherOptions<I> {
  /**
   * How long the first item of a batch waits for others to join it; 0 = only the items added in the same
   * turn of the event loop.
   */
  lingerMs: number;
  /** A batch is written as soon as it holds this many items, linger or not. */
  maxItems: number;
  /** A batch is written as soon as its items weigh this many bytes (by `bytesOf`), linger or not. @defaultValue Infinity */
  maxBytes?: number;
  /** An item's weight against `maxBytes`. @defaultValue () => 0 */
  bytesOf?: (item: I) => number;
}

interface Caller<R> {
  from: number;
  count: number;
  resolve: (results: R[]) => void;
  reject: (error: unknown) => void;
}

interface Batch<I, R> {
  items: I[];
  bytes: number;
  callers: Caller<R>[];
  /** Stops the linger's timer (the batch is being written for another reason). */
  cancel: () => void;
}

/**
 * Items from concurrent callers gathered into batches, each written by one call of `write`: a batch is
 * sealed `lingerMs` after its first item, or at once when full (`maxItems`, `maxBytes`). Every caller is
 * answered its own share of the batch's results, in the order of its own items, once the batch is written;
 * a batch whose write fails rejects each of its callers with the error. Items keep their order within a
 * batch; batches in flight together have no order between them.
 *
 * `write` answers one result per item, or nothing (each caller then gets an empty array).
 */
export class LingerBatcher<I, R = void> {
  private filling: Batch<I, R> | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly maxBytes: number;
  private readonly bytesOf: (item: I) => number;

  constructor(
    // biome-ignore lint/suspicious/noConfusingVoidType: a writer with nothing to answer per item is a plain async function, which returns Promise<void>
    private readonly write: (items: I[]) => Promise<R[] | void>,
    private readonly options: LingerBatcherOptions<I>,
  ) {
    this.maxBytes = options.maxBytes ?? Infinity;
    this.bytesOf = options.bytesOf ?? (() => 0);
  }

  /** Adds one item; resolves to its result once its batch is written. */
  async add(item: I): Promise<R> {
    return (await this.addAll([item]))[0];
  }

  /** Adds items, kept together in one batch; resolves to their results once it is written. */
  addAll(items: readonly I[]): Promise<R[]> {
    if (items.length === 0) return Promise.resolve([]);
    return new Promise<R[]>((resolve, reject) => {
      const batch = (this.filling ??= this.open());
      batch.callers.push({ from: batch.items.length, count: items.length, resolve, reject });
      for (const item of items) {
        batch.items.push(item);
        batch.bytes += this.bytesOf(item);
      }
      if (batch.items.length >= this.options.maxItems || batch.bytes >= this.maxBytes) this.seal();
    });
  }

  /** Writes the batch filling now; resolves once every batch sealed so far is written (or failed). */
  async flush(): Promise<void> {
    this.seal();
    await Promise.all(this.inFlight);
  }

  /** Writes the batch filling now, then waits until no batch is in flight (those sealed meanwhile included). */
  async drain(): Promise<void> {
    this.seal();
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  private open(): Batch<I, R> {
    const { lingerMs } = this.options;
    if (lingerMs > 0) {
      const timer = setTimeout(() => this.seal(), lingerMs);
      return { items: [], bytes: 0, callers: [], cancel: () => clearTimeout(timer) };
    }
    const immediate = setImmediate(() => this.seal());
    return { items: [], bytes: 0, callers: [], cancel: () => clearImmediate(immediate) };
  }

  /** Writes the batch filling (if any); items added from now on start the next one. */
  private seal(): void {
    const batch = this.filling;
    if (!batch) return;
    this.filling = null;
    batch.cancel();
    const written: Promise<void> = this.answer(batch).finally(() => this.inFlight.delete(written));
    this.inFlight.add(written);
  }

  private async answer({ items, callers }: Batch<I, R>): Promise<void> {
    // biome-ignore lint/suspicious/noConfusingVoidType: what the writer above answered
    let results: R[] | void;
    try {
      results = await this.write(items);
    } catch (error) {
      for (const caller of callers) caller.reject(error);
      return;
    }
    for (const { from, count, resolve } of callers) resolve(results ? results.slice(from, from + count) : []);
  }
}
