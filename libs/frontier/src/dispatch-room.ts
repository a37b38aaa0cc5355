import type { FrontierStore } from '@crawler/frontier-store';
import type { DispatchSignal } from './dispatch-signal';

/** How long a read of the frontier's counts is used. */
export const COUNTS_READ_MS = 1000;
/**
 * With no room left by the last read and this process's own lease ends, the counts are read again this soon at
 * the earliest: only another frontier replica's ends can have made room.
 */
export const COUNTS_REREAD_MS = 250;

interface CountsRead {
  leased: number;
  fetched: number;
  at: number;
  /** URLs this dispatcher claimed since the read. */
  claimed: number;
}

/**
 * How many URLs the dispatcher may claim now: FRONTIER_MAX_IN_FLIGHT less the leases out, and no more than
 * FRONTIER_MAX_PAGES allows. The counts are a sum over every shard of the frontier, one script each (64 on a
 * Redis Cluster): read on every dispatcher round, they cost more Redis commands than the pages did. So a read
 * is used for COUNTS_READ_MS, this dispatcher's claims since counted as leases and this process's lease ends
 * since (DispatchSignal) as room made. With one frontier replica both limits hold exactly without reading
 * again; another replica's claims and ends are seen at the next read, and each replica may overshoot by what
 * the others claimed in COUNTS_READ_MS.
 */
export class DispatchRoom {
  private read?: CountsRead;

  constructor(
    private readonly store: Pick<FrontierStore, 'counts'>,
    private readonly limits: { maxInFlight: number; maxPages: number },
    private readonly ends: Pick<DispatchSignal, 'countingFromHere' | 'endedSince'>,
  ) {}

  /** URLs that may be claimed now (0 or less: none), or 'budget-spent' once FRONTIER_MAX_PAGES pages are fetched. */
  async room(now: number): Promise<number | 'budget-spent'> {
    let read = this.read;
    const age = read ? now - read.at : Number.POSITIVE_INFINITY;
    if (!read || age >= COUNTS_READ_MS || age < 0 || (age >= COUNTS_REREAD_MS && this.roomBy(read) <= 0)) {
      const { leased, fetched } = await this.store.counts();
      // Ends sent after the answer came are surely not in it; those sent while it was on its way may be, and are
      // left out: room is never counted twice, at worst seen at the next read.
      this.ends.countingFromHere();
      read = this.read = { leased, fetched, at: now, claimed: 0 };
    }
    if (this.limits.maxPages > 0 && read.fetched + this.ends.endedSince.fetched >= this.limits.maxPages) return 'budget-spent';
    return this.roomBy(read);
  }

  /** This dispatcher claimed `n` URLs: leases until the next read counts them. */
  claimed(n: number): void {
    if (this.read) this.read.claimed += n;
  }

  private roomBy(read: CountsRead): number {
    const ended = this.ends.endedSince;
    const leased = read.leased + read.claimed - ended.leases;
    const fetched = read.fetched + ended.fetched;
    const inFlight = this.limits.maxInFlight - leased;
    return this.limits.maxPages > 0 ? Math.min(inFlight, this.limits.maxPages - fetched - leased) : inFlight;
  }
}
