import { Injectable } from '@nestjs/common';
import { Counter, Registry } from 'prom-client';

/**
 * How a resolution that went through the shared cache ended, exactly one per resolution: answered by the
 * cache (`hit`, a cached failure included), or by a DNS query (`miss`) that failed (`failure`). IP literals
 * and the static hosts map are not lookups and are not counted.
 */
export type DnsLookupResult = 'hit' | 'miss' | 'failure';

/**
 * The resolver's Prometheus metrics. The cache hit rate over any window is
 * `rate(crawler_dns_lookups_total{result="hit"}[5m]) / rate(crawler_dns_lookups_total[5m])`.
 */
@Injectable()
export class DnsResolverMetrics {
  private readonly lookups: Counter<'result'>;
  private readonly refreshes: Counter<'result'>;

  constructor(registry: Registry) {
    this.lookups = new Counter({
      name: 'crawler_dns_lookups_total',
      help: 'Name resolutions through the shared DNS cache: hit (answered by the cache), miss (a DNS query answered), failure (a DNS query failed)',
      labelNames: ['result'],
      registers: [registry],
    });
    this.refreshes = new Counter({
      name: 'crawler_dns_refreshes_total',
      help: 'Background refreshes of cached answers near their expiry, by result (ok, failure: the old answer stays until it expires)',
      labelNames: ['result'],
      registers: [registry],
    });
    // Every series from the start, so that the hit rate is 0/n rather than missing.
    for (const result of ['hit', 'miss', 'failure'] as const) this.lookups.inc({ result }, 0);
    for (const result of ['ok', 'failure'] as const) this.refreshes.inc({ result }, 0);
  }

  /** Metrics on a registry nobody scrapes: for a service built by hand (specs, tools). */
  static unregistered(): DnsResolverMetrics {
    return new DnsResolverMetrics(new Registry());
  }

  lookup(result: DnsLookupResult): void {
    this.lookups.inc({ result });
  }

  refresh(result: 'ok' | 'failure'): void {
    this.refreshes.inc({ result });
  }
}
