import { Inject, Injectable } from '@nestjs/common';
import { Gauge, Registry } from 'prom-client';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { FRONTIER_STORE, FrontierStats, FrontierStore } from '@crawler/frontier-store';
import { DownloaderMembership } from '@crawler/hash-ring';
import { STATE_STORE, StateStore } from '@crawler/state';

/**
 * The frontier's size and the downloaders on the ring, read from the shared state at scrape time (a handful
 * of O(1) reads, and one read of the membership hash, which holds one field per downloader). Every frontier
 * replica reports the same crawl-wide numbers: aggregate with `max`, not `sum`.
 */
@Injectable()
export class FrontierMetrics {
  constructor(@Inject(FRONTIER_STORE) store: FrontierStore, @Inject(STATE_STORE) state: StateStore, @Inject(CRAWLER_CONFIG) config: CrawlerConfig, registry: Registry) {
    const membership = new DownloaderMembership(state.namespace('downloaders'), { heartbeatMs: config.downloader.heartbeatMs });
    // One stats() serves the three frontier gauges of a scrape (prom-client collects them one after the other).
    let reading: { at: number; stats: Promise<FrontierStats> } | undefined;
    const stats = () => {
      if (!reading || Date.now() - reading.at > 1000) reading = { at: Date.now(), stats: store.stats() };
      return reading.stats;
    };
    new Gauge({
      name: 'crawler_frontier_urls',
      help: 'URLs in the frontier, by state: queued (front and back queues, not leased), scheduled (held until their recrawl or retry time)',
      labelNames: ['state'],
      registers: [registry],
      async collect() {
        const s = await stats();
        this.set({ state: 'queued' }, Math.max(0, s.size - s.leased));
        this.set({ state: 'scheduled' }, s.scheduled);
      },
    });
    new Gauge({
      name: 'crawler_frontier_hosts',
      help: 'Hosts holding a back queue: hosts with URLs queued or in flight',
      registers: [registry],
      async collect() {
        this.set((await stats()).backQueuesInUse);
      },
    });
    new Gauge({
      name: 'crawler_frontier_leases',
      help: 'URLs handed to a downloader and not completed yet (leases in flight)',
      registers: [registry],
      async collect() {
        this.set((await stats()).leased);
      },
    });
    new Gauge({
      name: 'crawler_downloaders',
      help: 'Downloaders on the hash ring: members whose heartbeat is current',
      registers: [registry],
      async collect() {
        this.set((await membership.live()).length);
      },
    });
  }
}
