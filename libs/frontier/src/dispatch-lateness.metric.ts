import { Injectable } from '@nestjs/common';
import { Histogram, Registry } from 'prom-client';
import type { Claim } from '@crawler/frontier-store';

/**
 * How late the dispatcher hands hosts' URLs out: from when a host's turn came (its time in the heap: its
 * politeness delay over) to the claim that leased its URL. A dispatcher that keeps up claims within a tick or
 * two; one that falls behind a large frontier shows it here first, before the pages per second drop.
 */
@Injectable()
export class DispatchLateness {
  private readonly histogram: Histogram;

  constructor(registry: Registry) {
    this.histogram = new Histogram({
      name: 'crawler_frontier_dispatch_lateness_seconds',
      help: "Time from when a host's turn came (its delay over) to the claim that handed its URL to a downloader",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registers: [registry],
    });
  }

  observe(claims: readonly Claim[], now: number): void {
    for (const claim of claims) if (claim.dueAt !== undefined) this.histogram.observe(Math.max(0, now - claim.dueAt) / 1000);
  }
}
