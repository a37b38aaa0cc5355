import type { PartitionedHash } from '@crawler/state';

/** Hosts whose reservation a process remembers; a host forgotten gives up its unused pages. */
const RESERVATIONS_KEPT = 10_000;
/** Pages reserved beyond what a batch needs: at most this many… */
const RESERVE_MAX = 256;
/** …and at most this share of what the host had left at the last reservation (1/16), so a small budget is exact. */
const RESERVE_SHARE = 16;

interface Held {
  /** Pages reserved and not yet used. */
  left: number;
  /** The host's reserved total, every process's, as the last reservation found it. */
  total: number;
}

/**
 * The per-host page budget, shared by every replica of url-filter: `counts` holds each host's pages reserved
 * so far, never more than `budget`. A process reserves a few pages more than a batch needs (up to RESERVE_MAX,
 * and a sixteenth of what the host has left) and spends them on later batches without asking Redis: one
 * increment a host now and then, not one a batch (a command or two a page of the crawl, on a cluster one a
 * host a page, since each host's count is its own bucket's).
 *
 * A host never gets more than its budget: a reservation past it is given back at once. It may get a little
 * less: pages another replica reserved and has not used yet are not seen by this one, and the pages of a
 * process that stops, or that forgets the host (it remembers RESERVATIONS_KEPT), go unused. Near its end a
 * budget is reserved a page or two at a time, so what is left unused then is small; under 16 it is exact.
 */
export class HostBudget {
  private readonly held = new Map<string, Held>();

  constructor(
    private readonly counts: PartitionedHash,
    private readonly budget: number,
  ) {}

  /** For each host, how many of the pages it needs it may have now (all of them while its budget lasts). */
  async grant(needs: ReadonlyMap<string, number>): Promise<Map<string, number>> {
    const asks = new Map<string, number>();
    for (const [host, need] of needs) {
      const held = this.held.get(host) ?? { left: 0, total: 0 };
      if (held.left >= need) continue;
      const extra = Math.max(0, Math.min(RESERVE_MAX, Math.floor((this.budget - held.total) / RESERVE_SHARE)));
      asks.set(host, need - held.left + extra);
    }
    const totals = asks.size ? await this.counts.incrMany(asks) : new Map<string, number>();
    const givenBack = new Map<string, number>();
    const granted = new Map<string, number>();
    for (const [host, need] of needs) {
      // Read again after the increment: a concurrent batch of this process may have changed it meanwhile.
      const held = this.held.get(host) ?? { left: 0, total: 0 };
      const ask = asks.get(host);
      if (ask !== undefined) {
        const total = totals.get(host)!;
        const over = Math.min(ask, Math.max(0, total - this.budget));
        if (over > 0) givenBack.set(host, -over);
        held.left += ask - over;
        held.total = total - over;
      }
      const take = Math.min(need, held.left);
      held.left -= take;
      granted.set(host, take);
      this.keep(host, held);
    }
    if (givenBack.size) await this.counts.incrMany(givenBack);
    return granted;
  }

  private keep(host: string, held: Held): void {
    this.held.delete(host);
    this.held.set(host, held);
    if (this.held.size > RESERVATIONS_KEPT) this.held.delete(this.held.keys().next().value!);
  }
}
