import { Injectable } from '@nestjs/common';
import type { DnsLookupResult } from '@crawler/net';
import { Counter, Registry } from 'prom-client';

/**
 * The resolver's Prometheus metrics. The cache hit rate over any window is
 * `rate(crawler_dns_lookups_total{result="hit"}[5m]) / rate(crawler_dns_lookups_total{result!="hosts"}[5m])`
 * (the lookups that reached the cache); the share answered without a DNS query counts `hosts` in too.
 */
@Injectable()
export class DnsResolverMetrics {
  private readonly lookups: Counter<'result'>;
  private readonly refreshes: Counter<'result'>;

  constructor(registry: Registry) {
    this.lookups = new Counter({
      name: 'crawler_dns_lookups_total',
      help: 'Name resolutions: hosts (answered by a hosts file), hit (answered by the shared cache), miss (a DNS query answered), failure (a DNS query failed)',
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
    for (const result of ['hosts', 'hit', 'miss', 'failure'] as const) this.lookups.inc({ result }, 0);
    for (const result of ['ok', 'failure'] as const) this.refreshes.inc({ result }, 0);
  }

  lookup(result: DnsLookupResult): void {
    this.lookups.inc({ result });
  }

  refresh(result: 'ok' | 'failure'): void {
    this.refreshes.inc({ result });
  }
}
