import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { CrawlUrl, FetchRequest, fetchQueue, QueueName, SCHEMA_VERSION } from '@crawler/contracts';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { LOGGER, Logger } from '@crawler/logging';
import { UnreachedHostsRegistry } from '@crawler/crawl-state';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { DnsResolverService } from './dns-resolver.service';

/** URLs leaving the frontier get a vetted address, or go back to the frontier as a failed turn. */
@Injectable()
export class DnsResolverProcessor implements OnApplicationBootstrap {
  constructor(
    private readonly pipeline: Pipeline,
    private readonly resolver: DnsResolverService,
    private readonly stats: CrawlStats,
    private readonly unreached: UnreachedHostsRegistry,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationBootstrap() {
    await this.pipeline.consume(QueueName.DnsResolve, (request) => this.handle(request), {
      concurrency: this.config.dns.concurrency,
    });
  }

  private async handle(request: FetchRequest): Promise<void> {
    // A robots.txt redirected to another host: that host is resolved and vetted like any other.
    const hop = request.robotsHop;
    const resolution = await this.resolver.resolve(new URL(hop?.url ?? request.url).hostname);
    // The resolver counts its own events (dns.cache-hit, dns.cache-miss, dns.refresh, dns.failure).
    // The frontier chose the downloader that owns this host on the hash ring.
    const queue = request.shard ? fetchQueue(request.shard) : QueueName.Fetch;
    const base = {
      v: SCHEMA_VERSION,
      leaseId: request.leaseId,
      fetchId: request.fetchId,
      url: request.url,
      host: request.host,
      requested: false,
      durationMs: 0,
    } as const;
    if (resolution.ok && request.resolveOnly) {
      // The frontier's first look at this host: it learns the address, so that the host's first request
      // already counts against its address's limits, and hands the URL out again.
      await this.pipeline.send(QueueName.FrontierDone, { ...base, kind: 'resolved', ip: resolution.address, retry: retryOf(request) });
      return;
    }
    if (resolution.ok) {
      // Every address the crawl may reach: the downloader moves to the next when a connection fails (a robots.txt
      // hop's host keeps to its first).
      const fallbackIps = hop ? undefined : resolution.fallbacks;
      await this.pipeline.send(queue, { ...request, ip: resolution.address, fallbackIps });
      return;
    }
    if (hop) {
      // The downloader ends the turn: robots.txt unreachable (disallow all for now), logged with its chain.
      this.logger.warn({ event: 'dns-refused', url: hop.url, robotsFor: request.url, error: resolution.error });
      await this.pipeline.send(queue, { ...request, ip: undefined, fallbackIps: undefined, robotsHop: { ...hop, refusal: resolution.error } });
      return;
    }
    const failed = { ...base, error: resolution.error };
    if (resolution.transient) {
      // The name may resolve later (the server timed out or failed): the host waits and the URL is kept, as for
      // an unreachable robots.txt; after FRONTIER_MAX_RETRIES such turns the frontier gives the host up.
      this.logger.warn({ event: 'dns-deferred', url: request.url, error: resolution.error });
      await this.stats.count('deferred.dns');
      await this.pipeline.send(QueueName.FrontierDone, {
        ...failed,
        kind: 'deferred',
        cause: 'dns',
        retryAfterMs: this.config.dns.failureTtlMs,
        retry: retryOf(request),
      });
      return;
    }
    this.logger.warn({ event: 'dns-refused', url: request.url, error: resolution.error });
    await this.stats.count(resolution.refused ? 'error.address-refused' : 'error.dns');
    await this.unreached.record(resolution.refused ? 'address-refused' : 'dns-failed', request.host, resolution.error);
    await this.pipeline.send(QueueName.FrontierDone, { ...failed, kind: 'error' });
  }
}

/** The URL as the frontier queued it, to be put back at the head of its host's queue. */
function retryOf(request: FetchRequest): CrawlUrl {
  const { url, kind, depth, source, hops, attempts, priority, revisit, referrer } = request;
  return { url, kind, depth, source, hops, attempts, priority, revisit, ...(referrer ? { referrer } : {}) };
}
