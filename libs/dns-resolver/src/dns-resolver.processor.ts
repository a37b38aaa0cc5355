import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { FetchRequest, fetchQueue, QueueName, SCHEMA_VERSION } from '@crawler/contracts';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { LOGGER, Logger } from '@crawler/logging';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { DnsResolverService } from './dns-resolver.service';

/** URLs leaving the frontier get a vetted address, or go back to the frontier as a failed turn. */
@Injectable()
export class DnsResolverProcessor implements OnApplicationBootstrap {
  constructor(
    private readonly pipeline: Pipeline,
    private readonly resolver: DnsResolverService,
    private readonly stats: CrawlStats,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationBootstrap() {
    await this.pipeline.consume(QueueName.DnsResolve, (request) => this.handle(request), {
      concurrency: this.config.dns.concurrency,
    });
  }

  private async handle(request: FetchRequest): Promise<void> {
    const resolution = await this.resolver.resolve(new URL(request.url).hostname);
    // The resolver counts its own events (dns.cache-hit, dns.cache-miss, dns.refresh, dns.failure).
    if (resolution.ok) {
      // The frontier chose the downloader that owns this host on the hash ring.
      const queue = request.shard ? fetchQueue(request.shard) : QueueName.Fetch;
      await this.pipeline.send(queue, { ...request, ip: resolution.address });
      return;
    }
    const base = { v: SCHEMA_VERSION, leaseId: request.leaseId, fetchId: request.fetchId, url: request.url, host: request.host, requested: false, error: resolution.error, durationMs: 0 } as const;
    if (resolution.transient) {
      // The name may resolve later (the server timed out or failed): the host waits and the URL is kept, as for
      // an unreachable robots.txt; after FRONTIER_MAX_RETRIES such turns the frontier gives the host up.
      this.logger.warn({ event: 'dns-deferred', url: request.url, error: resolution.error });
      await this.stats.count('deferred.dns');
      const { url, kind, depth, source, hops, attempts, priority, revisit, referrer } = request;
      const retry = { url, kind, depth, source, hops, attempts, priority, revisit, ...(referrer ? { referrer } : {}) };
      await this.pipeline.send(QueueName.FrontierDone, { ...base, kind: 'deferred', retryAfterMs: this.config.dns.failureTtlMs, retry });
      return;
    }
    this.logger.warn({ event: 'dns-refused', url: request.url, error: resolution.error });
    await this.stats.count('error.dns');
    await this.pipeline.send(QueueName.FrontierDone, { ...base, kind: 'error' });
  }
}
