import type { StateStore } from '@crawler/state';
import { HashRing } from './hash-ring';

export interface DownloaderMembershipOptions {
  /**
   * How often a live downloader is expected to beat (the default interval of a `HeartbeatLoop`).
   * @defaultValue 2000
   */
  heartbeatMs?: number;
  /**
   * A member whose last heartbeat is older than this is no longer live. Must exceed `heartbeatMs`, so that
   * one late beat does not drop a member (and move its hosts twice). Wall clocks of the processes sharing
   * the store must agree to well within this (NTP does).
   * @defaultValue 3 × heartbeatMs
   */
  expireAfterMs?: number;
  /**
   * Virtual nodes of the rings `ring()` builds; every process must use the same value.
   * @defaultValue 160
   */
  virtualNodes?: number;
}

/** The members as the heartbeats say, and which of those gone left drained. */
export interface MembershipView {
  /** Ids whose last heartbeat is at most `expireAfterMs` old, sorted. */
  live: string[];
  /**
   * Ids that left with nothing in flight (`leave(id, { drained: true })`), sorted: no fetch of theirs can
   * still be under way, so their hosts may go to the others at once. Any other departure (a tombstone of a
   * process that could not drain, silence) may hide a request still being made.
   */
  drained: string[];
}

/**
 * Which downloaders are alive, from their heartbeats in a shared StateStore, and the hash ring they form.
 *
 * One hash `members` in the store the caller hands over (a namespace of its choosing) maps each downloader
 * id to the time of its last heartbeat. `leave` writes a tombstone (the StateStore has no field delete):
 * `drained` for a member that left with nothing in flight, '0' otherwise; a tombstone, an expired time or an
 * unreadable value all mean "not a member". A field (a few
 * dozen bytes) stays behind for every id that ever beat. The downloader uses an id unique per process
 * start, so that a restarted downloader never consumes a fetch shard the frontier has given up on; a
 * deployment that restarts very often grows this hash until the state store gains a field delete.
 */
export class DownloaderMembership {
  static readonly MEMBERS_KEY = 'members';
  static readonly LEFT = '0';
  static readonly DRAINED = 'drained';

  readonly heartbeatMs: number;
  readonly expireAfterMs: number;
  readonly virtualNodes: number | undefined;

  constructor(
    private readonly store: StateStore,
    options: DownloaderMembershipOptions = {},
  ) {
    const heartbeatMs = options.heartbeatMs ?? 2000;
    if (!Number.isFinite(heartbeatMs) || heartbeatMs <= 0) {
      throw new RangeError(`heartbeatMs must be a positive number of milliseconds, got ${heartbeatMs}`);
    }
    const expireAfterMs = options.expireAfterMs ?? 3 * heartbeatMs;
    if (!Number.isFinite(expireAfterMs) || expireAfterMs <= heartbeatMs) {
      throw new RangeError(`expireAfterMs must exceed heartbeatMs (${heartbeatMs} ms), got ${expireAfterMs}`);
    }
    this.heartbeatMs = heartbeatMs;
    this.expireAfterMs = expireAfterMs;
    this.virtualNodes = options.virtualNodes;
    // Fail at construction, not at the first ring().
    new HashRing([], { virtualNodes: this.virtualNodes });
  }

  /** The clock, in milliseconds since the epoch (must be > 0: a stored '0' marks a member that left). */
  protected now(): number {
    return Date.now();
  }

  /** Records that `id` is alive now (joining if it was not a member). */
  async heartbeat(id: string): Promise<void> {
    checkId(id);
    const at = this.now();
    if (!Number.isFinite(at) || at <= 0) {
      throw new RangeError(`the membership clock must answer a positive millisecond timestamp, got ${at}`);
    }
    await this.store.hashSet(DownloaderMembership.MEMBERS_KEY, id, String(at));
  }

  /**
   * Removes `id` at once, without waiting for its heartbeat to expire; `drained` says it has nothing in
   * flight (see MembershipView). A later heartbeat rejoins.
   */
  async leave(id: string, options: { drained?: boolean } = {}): Promise<void> {
    checkId(id);
    await this.store.hashSet(DownloaderMembership.MEMBERS_KEY, id, options.drained ? DownloaderMembership.DRAINED : DownloaderMembership.LEFT);
  }

  /** Ids whose last heartbeat is at most `expireAfterMs` old, sorted. */
  async live(): Promise<string[]> {
    return (await this.view()).live;
  }

  /** The live members and the drained ones, from one read. */
  async view(): Promise<MembershipView> {
    const beats = await this.store.hashGetAll(DownloaderMembership.MEMBERS_KEY);
    const now = this.now();
    const live: string[] = [];
    const drained: string[] = [];
    for (const [id, value] of Object.entries(beats)) {
      const at = Number(value);
      if (Number.isFinite(at) && at > 0 && now - at <= this.expireAfterMs) live.push(id);
      else if (value === DownloaderMembership.DRAINED) drained.push(id);
    }
    return { live: live.sort(byId), drained: drained.sort(byId) };
  }

  /** The hash ring of the live members. */
  async ring(): Promise<HashRing> {
    return new HashRing(await this.live(), { virtualNodes: this.virtualNodes });
  }
}

export interface HeartbeatLoopOptions {
  /**
   * Called with the error of each failed heartbeat after the first (whose error `start()` answers); the
   * loop keeps beating, so a store outage shorter than `expireAfterMs` goes unnoticed by the ring.
   * `lastError` and `consecutiveFailures` report the same for health checks.
   */
  onError?: (error: unknown) => void;
}

/**
 * Keeps one downloader's membership alive: a heartbeat at `start()` and every `intervalMs` after, on an
 * unref'd timer (it never keeps a process alive), and `leave` at `stop()`. A beat still in flight when the
 * next is due is not doubled up.
 */
export class HeartbeatLoop {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private failures = 0;
  private error: unknown;

  constructor(
    private readonly membership: DownloaderMembership,
    readonly id: string,
    /** @defaultValue the membership's `heartbeatMs` */
    readonly intervalMs: number = membership.heartbeatMs,
    private readonly options: HeartbeatLoopOptions = {},
  ) {
    checkId(id);
    if (!Number.isFinite(intervalMs) || intervalMs <= 0 || intervalMs >= membership.expireAfterMs) {
      throw new RangeError(`intervalMs must be positive and below the membership's expireAfterMs (${membership.expireAfterMs} ms), got ${intervalMs}`);
    }
  }

  get running(): boolean {
    return this.timer !== undefined;
  }

  /** Heartbeats that failed in a row (0 after a success). */
  get consecutiveFailures(): number {
    return this.failures;
  }

  /** The error of the last heartbeat if it failed, else undefined. */
  get lastError(): unknown {
    return this.error;
  }

  /**
   * Starts beating. Resolves once the first heartbeat is stored, so the caller is a member when it
   * resolves; rejects with that heartbeat's error (the loop keeps trying: call `stop()` to give up).
   * Calling it while running is a no-op.
   */
  start(): Promise<void> {
    if (this.timer) return Promise.resolve();
    this.timer = setInterval(() => {
      if (!this.inFlight) void this.beat(true);
    }, this.intervalMs);
    this.timer.unref();
    return this.beat(false);
  }

  /**
   * Stops beating, waits for a beat in flight, then leaves the membership (so the ring drops it at once);
   * `drained`: with nothing in flight, so its hosts need not wait for a fetch of its to time out.
   */
  async stop(options: { drained?: boolean } = {}): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.inFlight?.catch(() => undefined);
    await this.membership.leave(this.id, options);
  }

  /** One heartbeat, recorded; its error goes to `onError` when `report`, else to the caller. */
  private beat(report: boolean): Promise<void> {
    const beat = this.membership.heartbeat(this.id).then(
      () => {
        this.failures = 0;
        this.error = undefined;
      },
      (error: unknown) => {
        this.failures++;
        this.error = error;
        if (report) this.options.onError?.(error);
        throw error;
      },
    );
    const tracked = beat.finally(() => {
      if (this.inFlight === tracked) this.inFlight = undefined;
    });
    this.inFlight = tracked;
    // `tracked` is awaited by stop() with its error ignored; the error itself goes to the caller or onError.
    tracked.catch(() => undefined);
    return report ? beat.catch(() => undefined) : beat;
  }
}

function byId(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function checkId(id: string): void {
  if (typeof id !== 'string' || id.length === 0) {
    throw new TypeError(`a downloader id must be a non-empty string, got ${JSON.stringify(id)}`);
  }
}
