import type {
  Claim,
  ClaimOptions,
  Completion,
  FrontierCounts,
  FrontierItem,
  FrontierStats,
  FrontierStore,
  FrontierWork,
  HostControls,
  HostInfo,
  KnownHosts,
  ScheduledItem,
  Turn,
  TurnOptions,
} from './frontier-store';
import { FrontierShardsError } from './recorded-shards';

/** How long `open()` waits for Redis: a boot in an outage goes on, and the first call reads the count. */
export const OPEN_WAIT_MS = 2000;

/**
 * A Redis frontier built once its crawl's shard count is known (settleShardCount: a read, on the first
 * call). A reading Redis could not answer (down, full) is tried again at the next call; a count that does
 * not match (FrontierShardsError) fails every call, and `open()` lets a process refuse to boot on it.
 */
export class RecordedShardsFrontierStore implements FrontierStore {
  private store?: Promise<FrontierStore>;
  private opened?: FrontierStore;

  constructor(
    private readonly build: () => Promise<FrontierStore>,
    /** Forgets the record (clear), then closes what the store shares (its connection). */
    private readonly release: { forget: () => Promise<void>; close: () => Promise<void> },
  ) {}

  /**
   * Reads (or records) the shard count now. Throws FrontierShardsError on a mismatch; an outage is not a reason
   * to refuse, so a reading that fails or takes over OPEN_WAIT_MS is left to the first call.
   */
  async open(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, OPEN_WAIT_MS);
    });
    const read = this.ready().then(
      () => undefined,
      (error: unknown) => {
        if (error instanceof FrontierShardsError) throw error;
      },
    );
    try {
      await Promise.race([read, waited]);
    } finally {
      clearTimeout(timer);
      // Past the wait, a refusal reaches the calls instead (each fails with it), not the process as an unhandled rejection.
      read.catch(() => undefined);
    }
  }

  private ready(): Promise<FrontierStore> {
    this.store ??= this.build().then(
      (store) => (this.opened = store),
      (error: unknown) => {
        if (!(error instanceof FrontierShardsError)) this.store = undefined;
        throw error;
      },
    );
    return this.store;
  }

  async enqueue(items: FrontierItem[], now: number, batchId?: string) {
    return (await this.ready()).enqueue(items, now, batchId);
  }
  async schedule(items: ScheduledItem[]) {
    return (await this.ready()).schedule(items);
  }
  async promoteDue(now: number, max: number) {
    return (await this.ready()).promoteDue(now, max);
  }
  async claim(options: ClaimOptions): Promise<Claim[]> {
    return (await this.ready()).claim(options);
  }
  async complete(leaseId: string, completion: Completion, now: number) {
    return (await this.ready()).complete(leaseId, completion, now);
  }
  async reclaimExpired(now: number, retryAt: number) {
    return (await this.ready()).reclaimExpired(now, retryAt);
  }
  async reclaimWhere(predicate: (claim: Claim) => boolean, now: number, retryAt: number) {
    return (await this.ready()).reclaimWhere(predicate, now, retryAt);
  }
  async takeTurn(host: string, options: TurnOptions): Promise<Turn> {
    return (await this.ready()).takeTurn(host, options);
  }
  async endTurn(leaseId: string, nextAt: number, now: number) {
    return (await this.ready()).endTurn(leaseId, nextAt, now);
  }
  async nextDueAt() {
    return (await this.ready()).nextDueAt();
  }
  async nextScheduledAt() {
    return (await this.ready()).nextScheduledAt();
  }
  async hostInfo(host: string): Promise<HostInfo> {
    return (await this.ready()).hostInfo(host);
  }
  async knownHosts(after: string, limit: number): Promise<KnownHosts> {
    return (await this.ready()).knownHosts(after, limit);
  }
  async politeness(host: string) {
    return (await this.ready()).politeness(host);
  }
  async counts(): Promise<FrontierCounts> {
    return (await this.ready()).counts();
  }
  async work(): Promise<FrontierWork> {
    return (await this.ready()).work();
  }
  async setHostControls(host: string, controls: HostControls, now: number) {
    return (await this.ready()).setHostControls(host, controls, now);
  }
  async prune(maxFront: number) {
    return (await this.ready()).prune(maxFront);
  }
  async purgeHost(host: string, now: number) {
    return (await this.ready()).purgeHost(host, now);
  }
  async stats(): Promise<FrontierStats> {
    return (await this.ready()).stats();
  }
  async audit(host: string, entries: string[]) {
    return (await this.ready()).audit(host, entries);
  }
  async auditMany(byHost: ReadonlyMap<string, string[]>) {
    return (await this.ready()).auditMany(byHost);
  }
  async auditLog(host: string) {
    return (await this.ready()).auditLog(host);
  }

  /** Empties the frontier and forgets its shard count: a crawl begun afresh under the prefix records its own. */
  async clear(): Promise<void> {
    await (await this.ready()).clear();
    await this.release.forget();
  }

  async close(): Promise<void> {
    // A store never built holds nothing to flush (and building it now would connect only to close).
    await this.opened?.close();
    await this.release.close();
  }
}
