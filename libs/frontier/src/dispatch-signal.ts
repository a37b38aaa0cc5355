import { Injectable } from '@nestjs/common';

/**
 * Wakes the dispatcher early when this process adds URLs or completes leases (other replicas are seen on its
 * next tick), and tells it which leases this process ended since its last read of the frontier's counts
 * (DispatchRoom), so that it need not read them again to see the room they made.
 */
@Injectable()
export class DispatchSignal {
  private waiters: (() => void)[] = [];
  /** Lease ends sent to the store so far; those numbered from `countedFrom` on were sent after the last read answered. */
  private sent = 0;
  private countedFrom = 0;
  private endedSinceRead = { leases: 0, fetched: 0 };

  wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Resolves after `ms`, or sooner when woken. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.max(0, ms));
      const self = this;
      function done() {
        clearTimeout(timer);
        self.waiters = self.waiters.filter((w) => w !== done);
        resolve();
      }
      this.waiters.push(done);
    });
  }

  /** Called just before a lease's end is sent to the store; the number it answers goes to `leaseEnded`. */
  endingLease(): number {
    return this.sent++;
  }

  /** The store accepted the end numbered `ticket`; `fetched`: it counts against FRONTIER_MAX_PAGES. */
  leaseEnded(ticket: number, fetched: boolean): void {
    if (ticket < this.countedFrom) return;
    this.endedSinceRead.leases++;
    if (fetched) this.endedSinceRead.fetched++;
  }

  /** A read of the counts has answered: lease ends sent from now on are counted afresh. */
  countingFromHere(): void {
    this.countedFrom = this.sent;
    this.endedSinceRead = { leases: 0, fetched: 0 };
  }

  /** Leases this process ended since the last read, and how many of them fetched a page. */
  get endedSince(): Readonly<{ leases: number; fetched: number }> {
    return this.endedSinceRead;
  }
}
