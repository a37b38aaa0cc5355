import { groupBy } from '@crawler/redis';
import type {
  Claim,
  ClaimOptions,
  Completion,
  FrontierCounts,
  FrontierWork,
  FrontierItem,
  FrontierShard,
  FrontierStats,
  FrontierStore,
  HostControls,
  HostInfo,
  KnownHosts,
  Looked,
  ScheduledItem,
  Turn,
  TurnOptions,
} from './frontier-store';

/**
 * A shard's heaps are looked at again after this long (in the callers' clock) even if this process saw no
 * change: another frontier replica may have made hosts due there.
 */
export const SHARD_LOOK_MS = 1000;

type Rotation = 'claim' | 'promote';

/**
 * What this process last saw of a shard's heap (or of its set-aside URLs): the earliest due time, when, and
 * how many changes ago.
 */
interface ShardView {
  dueAt: number;
  seenAt: number;
  version: number;
  /** The order in which the read it holds was sent: an older read answered later must not replace it. */
  read: number;
}

/** Reads of shards, numbered as they are sent. */
let reads = 0;

/**
 * `max` split as evenly as possible over `shards` (in that order: the first ones get the remainder). Shards
 * left with 0 (fewer units than shards) are absent.
 */
export function splitEvenly(max: number, shards: number[]): Map<number, number> {
  const shares = new Map<number, number>();
  if (shards.length === 0 || max <= 0) return shares;
  const base = Math.floor(max / shards.length);
  const extra = max % shards.length;
  shards.forEach((shard, k) => {
    const share = base + (k < extra ? 1 : 0);
    if (share > 0) shares.set(shard, share);
  });
  return shares;
}

/**
 * The frontier split into shards, each a whole frontier of its own (front and back queues, heap, leases,
 * per-host and per-IP state) for the hosts that hash to it (`shardOf`). On a Redis Cluster each shard is
 * one slot, so every step is still one atomic script, and the shards spread over the masters.
 *
 * What sharding relaxes: per-IP limits hold within a shard. A site's subdomains share a shard, but hosts of
 * different sites on one address may land in different shards, and are then paced per shard.
 *
 * Claims are fair across shards: each call starts at the next shard in turn and splits `max` over the
 * shards that have due hosts, asking each at most once (in parallel). Which shards have due hosts it knows
 * from the earliest due time each shard answers with every claim, enqueue and completion of this process
 * there (read by the same script: FrontierShard), and looks at afresh after SHARD_LOOK_MS.
 * Promotions and `nextDueAt` work from such views too (of the set-aside URLs, of the heaps): with 64 shards,
 * asking every shard on every dispatcher round cost more Redis commands than the pages themselves. A recrawl
 * or a retry another replica sets aside is therefore promoted up to SHARD_LOOK_MS late.
 */
export class ShardedFrontierStore implements FrontierStore {
  private readonly views: ShardView[];
  /** The same, of each shard's set-aside URLs (recrawls, retries): which shards `promoteDue` must ask. */
  private readonly scheduledViews: ShardView[];
  /** The shard first in turn, for claims and for promotions (apart: one must not steer the other's turn). */
  private readonly turns: Record<Rotation, number> = { claim: 0, promote: 0 };
  private statsReading?: Promise<FrontierStats>;

  constructor(
    private readonly shards: FrontierShard[],
    private readonly shardOf: (host: string) => number,
    /** Closes what the shards share (a Redis connection), after the shards. */
    private readonly release: () => Promise<void> = async () => undefined,
  ) {
    this.views = shards.map(() => ({ dueAt: -Infinity, seenAt: -Infinity, version: 0, read: 0 }));
    this.scheduledViews = shards.map(() => ({ dueAt: -Infinity, seenAt: -Infinity, version: 0, read: 0 }));
  }

  async enqueue(items: FrontierItem[], now: number, batchId?: string): Promise<number> {
    // The batch id goes to each shard with that shard's part, always the same part of the same batch: a
    // redelivered batch resumes in each shard where it stopped. A failure is answered once every shard's
    // part has settled, so no part is still being written when the batch comes again.
    const settled = await Promise.allSettled(
      [...this.byShard(items, (i) => i.host)].map(([shard, part]) => this.changeAndLook(shard, now, () => this.shards[shard].enqueueAndLook(part, now, batchId))),
    );
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    return total(settled.map((r) => (r as PromiseFulfilledResult<number>).value));
  }

  async schedule(items: ScheduledItem[]): Promise<void> {
    await Promise.all(
      [...this.byShard(items, (i) => i.host)].map(async ([shard, part]) => {
        await this.shards[shard].schedule(part);
        mayBeDue(this.scheduledViews[shard], Math.min(...part.map((i) => i.dueAt)));
      }),
    );
  }

  async promoteDue(now: number, max: number): Promise<number> {
    await this.lookAt(this.scheduledViews, now, (shard) => this.shards[shard].nextScheduledAt());
    const due = this.rotation('promote').filter((shard) => this.scheduledViews[shard].dueAt <= now);
    const moved = await Promise.all(
      [...this.shareOut('promote', max, due)].map(async ([shard, share]) => {
        const version = this.scheduledViews[shard].version;
        const read = ++reads;
        // Sent together, so one round trip: what is left set aside is read after the promotion.
        const [n, next] = await Promise.all([this.shards[shard].promoteDue(now, share), this.shards[shard].nextScheduledAt()]);
        saw(this.scheduledViews[shard], next, now, version, read);
        if (n > 0) this.mayBeDue(shard, now);
        return n;
      }),
    );
    return total(moved);
  }

  async claim(options: ClaimOptions): Promise<Claim[]> {
    const { now, max } = options;
    await this.lookAt(this.views, now, (shard) => this.shards[shard].nextDueAt());
    const due = this.rotation('claim').filter((shard) => this.views[shard].dueAt <= now);
    const claimed = await Promise.all(
      [...this.shareOut('claim', max, due)].map(async ([shard, share]) => {
        const version = this.views[shard].version;
        const read = ++reads;
        const { value: claims, dueAt } = await this.shards[shard].claimAndLook({ ...options, max: share });
        saw(this.views[shard], dueAt, now, version, read);
        return claims.map((c) => ({ ...c, leaseId: `${shard}.${c.leaseId}` }));
      }),
    );
    return claimed.flat();
  }

  async complete(leaseId: string, completion: Completion, now: number): Promise<boolean> {
    const lease = this.parseLease(leaseId);
    if (!lease) return false;
    const done = await this.changeAndLook(lease.shard, now, () => this.shards[lease.shard].completeAndLook(lease.id, completion, now));
    if (done && completion.retryLater && !completion.requeue) mayBeDue(this.scheduledViews[lease.shard], completion.retryLater.dueAt);
    return done;
  }

  /** In the shard that owns the host, so a turn and the host's claims see one schedule. */
  async takeTurn(host: string, options: TurnOptions): Promise<Turn> {
    const shard = this.shardOf(host);
    const turn = await this.shards[shard].takeTurn(host, options);
    return turn.leaseId === undefined ? turn : { ...turn, leaseId: `${shard}.${turn.leaseId}` };
  }

  async endTurn(leaseId: string, nextAt: number, now: number): Promise<boolean> {
    const lease = this.parseLease(leaseId);
    if (!lease) return false;
    const done = await this.shards[lease.shard].endTurn(lease.id, nextAt, now);
    // The host's back queue may be back in the shard's heap, due from nextAt at the earliest.
    if (done) this.mayBeDue(lease.shard, nextAt);
    return done;
  }

  async reclaimExpired(now: number, retryAt: number): Promise<number> {
    return this.sum((shard) => this.shards[shard].reclaimExpired(now, retryAt), retryAt);
  }

  async reclaimWhere(predicate: (claim: Claim) => boolean, now: number, retryAt: number): Promise<number> {
    return this.sum((shard) => this.shards[shard].reclaimWhere((c) => predicate({ ...c, leaseId: `${shard}.${c.leaseId}` }), now, retryAt), retryAt);
  }

  /** From the views, the stale ones looked at again first (see the class comment). */
  async nextDueAt(): Promise<number | null> {
    await this.lookAt(this.views, Date.now(), (shard) => this.shards[shard].nextDueAt());
    const earliest = Math.min(...this.views.map((v) => v.dueAt));
    return earliest === Infinity ? null : earliest;
  }

  async nextScheduledAt(): Promise<number | null> {
    const dues = (await Promise.all(this.shards.map((s) => s.nextScheduledAt()))).filter((d): d is number => d !== null);
    return dues.length ? Math.min(...dues) : null;
  }

  hostInfo(host: string): Promise<HostInfo> {
    return this.shardFor(host).hostInfo(host);
  }

  politeness(host: string): Promise<Pick<HostInfo, 'politeness' | 'delayMs'>> {
    return this.shardFor(host).politeness(host);
  }

  async counts(): Promise<FrontierCounts> {
    const all = await Promise.all(this.shards.map((s) => s.counts()));
    return { leased: total(all.map((c) => c.leased)), fetched: total(all.map((c) => c.fetched)) };
  }

  async work(): Promise<FrontierWork> {
    const all = await Promise.all(this.shards.map((s) => s.work()));
    return { size: total(all.map((w) => w.size)), scheduled: total(all.map((w) => w.scheduled)), leased: total(all.map((w) => w.leased)) };
  }

  async setHostControls(host: string, controls: HostControls, now: number): Promise<void> {
    await this.shardFor(host).setHostControls(host, controls, now);
    this.mayBeDue(this.shardOf(host), now);
  }

  /**
   * The bound is the whole frontier's: the shards' front queues are measured, the URLs to drop chosen
   * lowest priority first across all of them, and each shard drops its part (lowest first, in one script).
   * URLs enqueued between the two steps may leave it briefly over the bound, until the next prune.
   */
  async prune(maxFront: number): Promise<number> {
    const fronts = (await Promise.all(this.shards.map((s) => s.stats()))).map((s) => s.front);
    let over = total(fronts.map((f) => total(f))) - maxFront;
    const drops = fronts.map(() => 0);
    for (let i = (fronts[0]?.length ?? 0) - 1; i >= 0 && over > 0; i--) {
      fronts.forEach((front, shard) => {
        const take = Math.min(over, front[i]);
        drops[shard] += take;
        over -= take;
      });
    }
    const dropped = await Promise.all(drops.map((d, shard) => (d > 0 ? this.shards[shard].prune(total(fronts[shard]) - d) : 0)));
    return total(dropped);
  }

  /** Each shard's first `limit` names after `after`, merged: the page is the first `limit` of them all. */
  async knownHosts(after: string, limit: number): Promise<KnownHosts> {
    const pages = await Promise.all(this.shards.map((s) => s.knownHosts(after, limit)));
    const hosts = pages.flatMap((p) => p.hosts).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return { hosts: hosts.slice(0, limit), total: total(pages.map((p) => p.total)) };
  }

  purgeHost(host: string, now: number): Promise<number> {
    return this.shardFor(host).purgeHost(host, now);
  }

  /**
   * Callers that ask while a reading is under way share it (a status read asks twice at once: for the
   * pipeline's snapshot and for the monitor): one reading is a script on every shard.
   */
  stats(): Promise<FrontierStats> {
    this.statsReading ??= this.readStats().finally(() => {
      this.statsReading = undefined;
    });
    return this.statsReading;
  }

  private async readStats(): Promise<FrontierStats> {
    const all = await Promise.all(this.shards.map((s) => s.stats()));
    const sum = (pick: (s: FrontierStats) => number) => total(all.map(pick));
    return {
      size: sum((s) => s.size),
      scheduled: sum((s) => s.scheduled),
      front: all[0].front.map((_, i) => sum((s) => s.front[i])),
      backQueuesInUse: sum((s) => s.backQueuesInUse),
      backQueuesFree: sum((s) => s.backQueuesFree),
      hostsDue: sum((s) => s.hostsDue),
      leased: sum((s) => s.leased),
    };
  }

  audit(host: string, entries: string[]): Promise<void> {
    return this.shardFor(host).audit(host, entries);
  }

  async auditMany(byHost: ReadonlyMap<string, string[]>): Promise<void> {
    const groups = this.byShard([...byHost], ([host]) => host);
    await Promise.all([...groups].map(([shard, part]) => this.shards[shard].auditMany(new Map(part))));
  }

  auditLog(host: string): Promise<string[]> {
    return this.shardFor(host).auditLog(host);
  }

  async clear(): Promise<void> {
    await Promise.all(this.shards.map((s) => s.clear()));
    this.views.forEach((_, shard) => this.mayBeDue(shard, -Infinity));
    this.scheduledViews.forEach((view) => mayBeDue(view, -Infinity));
  }

  async close(): Promise<void> {
    await Promise.all(this.shards.map((s) => s.close()));
    await this.release();
  }

  private shardFor(host: string): FrontierStore {
    return this.shards[this.shardOf(host)];
  }

  /** Every shard, starting at the one whose turn it is. */
  private rotation(turn: Rotation): number[] {
    return this.shards.map((_, k) => (this.turns[turn] + k) % this.shards.length);
  }

  /**
   * `max` split over `shards` (in turn order), and the turn passed on to the first shard this split served
   * less: no shard is always first, or always left out when `max` is smaller than the shards.
   */
  private shareOut(turn: Rotation, max: number, shards: number[]): Map<number, number> {
    if (shards.length === 0) return new Map();
    const extra = max % shards.length;
    this.turns[turn] = extra > 0 ? shards[extra] : (shards[0] + 1) % this.shards.length;
    return splitEvenly(max, shards);
  }

  private byShard<T>(items: Iterable<T>, hostOf: (item: T) => string): Map<number, T[]> {
    return groupBy(items, (item) => this.shardOf(hostOf(item)));
  }

  private parseLease(leaseId: string): { shard: number; id: string } | null {
    const dot = leaseId.indexOf('.');
    const shard = Number(leaseId.slice(0, dot));
    if (dot < 1 || !Number.isInteger(shard) || shard < 0 || shard >= this.shards.length) return null;
    return { shard, id: leaseId.slice(dot + 1) };
  }

  /** Runs `step` on every shard and adds up the answers; a shard where it did something may have hosts due at `dueFrom`. */
  private async sum(step: (shard: number) => Promise<number>, dueFrom: number): Promise<number> {
    const counts = await Promise.all(
      this.shards.map(async (_, shard) => {
        const n = await step(shard);
        if (n > 0) this.mayBeDue(shard, dueFrom);
        return n;
      }),
    );
    return total(counts);
  }

  /** Looks again at the shards whose view was not refreshed for SHARD_LOOK_MS (or never, or in another clock). */
  private async lookAt(views: ShardView[], now: number, read: (shard: number) => Promise<number | null>): Promise<void> {
    const stale = views.flatMap((v, shard) => (now - v.seenAt >= SHARD_LOOK_MS || now < v.seenAt ? [shard] : []));
    await Promise.all(
      stale.map(async (shard) => {
        const version = views[shard].version;
        const sent = ++reads;
        saw(views[shard], await read(shard), now, version, sent);
      }),
    );
  }

  /**
   * A change in the shard (enqueue, completion), whose answer brings the shard's earliest due time
   * after it, read in the same step: marking the shard "due now" instead sent half of a cluster crawl's
   * claims to shards with nothing due (a page's links reach many shards, mostly hosts already queued). If the
   * shard changed again meanwhile (`version`: this process's own later change), or the change failed (it may
   * have been made in part), the shard is marked due.
   */
  private async changeAndLook<T>(shard: number, now: number, change: () => Promise<Looked<T>>): Promise<T> {
    const view = this.views[shard];
    const version = view.version;
    const read = ++reads;
    try {
      const { value, dueAt } = await change();
      if (view.version !== version) this.mayBeDue(shard, now);
      else saw(view, dueAt, now, version, read);
      return value;
    } catch (error) {
      this.mayBeDue(shard, now);
      throw error;
    }
  }

  /** This process changed the shard: hosts there may be due from `at` on. */
  private mayBeDue(shard: number, at: number): void {
    mayBeDue(this.views[shard], at);
  }
}

/** Records a shard's earliest due time, unless this process changed the shard since it asked or a later read is recorded. */
function saw(view: ShardView, dueAt: number | null, now: number, version: number, read: number): void {
  if (view.version !== version || read < view.read) return;
  view.read = read;
  view.dueAt = dueAt ?? Infinity;
  view.seenAt = now;
}

/** Something in the shard may be due from `at` on. */
function mayBeDue(view: ShardView, at: number): void {
  view.dueAt = Math.min(view.dueAt, at);
  view.version++;
}

const total = (values: number[]) => values.reduce((a, b) => a + b, 0);
