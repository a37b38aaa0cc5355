import { BeforeApplicationShutdown, Inject, Injectable } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { LOGGER, Logger } from '@crawler/logging';
import { CachedResolver, DnsCacheCounts, DNS_CACHE_NAMESPACE, Resolution } from '@crawler/net';
import { CrawlStats } from '@crawler/runtime';
import { STATE_STORE, StateStore } from '@crawler/state';
import { DnsResolverMetrics } from './dns-resolver.metrics';

/**
 * The crawl's resolver (`CachedResolver` of libs/net: hosts maps, the shared cache, DNS, the address policy)
 * as the DNS resolver service runs it: its events counted in the crawl totals (`dns.<event>`) and its metrics.
 */
@Injectable()
export class DnsResolverService implements BeforeApplicationShutdown {
  private readonly resolver: CachedResolver;

  constructor(
    @Inject(STATE_STORE) state: StateStore,
    @Inject(CRAWLER_CONFIG) config: CrawlerConfig,
    stats: CrawlStats,
    @Inject(LOGGER) logger: Logger,
    metrics: DnsResolverMetrics,
  ) {
    this.resolver = new CachedResolver(state.namespace(DNS_CACHE_NAMESPACE), config.dns, {
      count: (event) => stats.count(`dns.${event}`),
      lookup: (result) => metrics.lookup(result),
      refresh: (result) => metrics.refresh(result),
      warn: (fields) => logger.warn(fields),
    });
  }

  resolve(hostname: string): Promise<Resolution> {
    return this.resolver.resolve(hostname);
  }

  /** Share of this process's cache reads that were hits: hits / (hits + misses); 0 before any. */
  hitRate(): number {
    return this.resolver.hitRate();
  }

  cacheCounts(): DnsCacheCounts {
    return this.resolver.cacheCounts();
  }

  /** Resolves once no background refresh is running (shutdown, tests). */
  idle(): Promise<void> {
    return this.resolver.idle();
  }

  async beforeApplicationShutdown(): Promise<void> {
    // Refreshes write to the state store, which is closed after this hook.
    await this.idle();
  }
}
