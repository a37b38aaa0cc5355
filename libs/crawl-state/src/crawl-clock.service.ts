import { Inject, Injectable } from '@nestjs/common';
import { STATE_STORE, StateStore } from '@crawler/state';

/** Kept for as long as a crawl can run: a start time that expired would give a stopped crawl a new clock. */
const KEPT_MS = 10 * 365 * 86_400_000;

/**
 * When the crawl began, for its time limit (FRONTIER_MAX_TIME_MS): the first dispatch of any frontier replica,
 * kept in the state store (namespace `control`, key `crawl-started-at`), so that every replica stops at the
 * same moment and a frontier restarted after a crash keeps the crawl's clock instead of starting its own.
 * The embedded run starts a clock of its own each run (`forget`): `--max-time` is that run's.
 */
@Injectable()
export class CrawlClock {
  static readonly NAMESPACE = 'control';
  static readonly KEY = 'crawl-started-at';
  private readonly store: StateStore;
  private known?: number;

  constructor(@Inject(STATE_STORE) state: StateStore) {
    this.store = state.namespace(CrawlClock.NAMESPACE);
  }

  /** The crawl's start, or null before its first dispatch; read until it is known, then kept. */
  async startedAt(): Promise<number | null> {
    if (this.known !== undefined) return this.known;
    const raw = Number(await this.store.get(CrawlClock.KEY));
    if (Number.isFinite(raw) && raw > 0) this.known = raw;
    return this.known ?? null;
  }

  /** Starts the crawl's clock at `now` unless it has started already (another replica, an earlier run). */
  async start(now: number): Promise<void> {
    if (this.known !== undefined) return;
    await this.store.setIfAbsent(CrawlClock.KEY, String(now), KEPT_MS);
    await this.startedAt();
  }

  /** Drops the crawl's start: the next `start` begins a new clock. */
  static forget(state: StateStore): Promise<void> {
    return state.namespace(CrawlClock.NAMESPACE).del(CrawlClock.KEY);
  }
}
