import { Injectable } from '@nestjs/common';
import { Counter, Histogram, Registry } from 'prom-client';
import type { RobotsFetch } from './robots.service';

/** What a request was for: a page (HTML), a sitemap, or a site's robots.txt. */
export type FetchResource = 'page' | 'sitemap' | 'robots';
/**
 * What robots.txt made of one downloader turn, exactly one per turn that reached it: the page is
 * `allowed` (fetched now) or `disallowed`; `fetched` when the turn was spent fetching robots.txt (the page
 * goes back to the frontier); `deferred` when robots.txt is unreachable (now or as cached), so the site waits.
 */
export type RobotsDecision = 'allowed' | 'disallowed' | 'deferred' | 'fetched';

/** Seconds: from a quick local answer to the default total timeout (DOWNLOADER_TOTAL_TIMEOUT_MS, 60 s). */
const DURATION_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * The downloader's Prometheus metrics: requests by status class, their latency, body bytes, and robots.txt
 * decisions. Crawl-wide totals (`fetched`, `status.2xx`, `error.fetch.<kind>`, `disallowed`…) stay in
 * CrawlStats; these are this process's, with labels dashboards can aggregate.
 */
@Injectable()
export class DownloaderMetrics {
  private readonly fetches: Counter<'resource' | 'status_class'>;
  private readonly duration: Histogram<'resource' | 'outcome'>;
  private readonly bytes: Counter<'resource'>;
  private readonly decisions: Counter<'decision'>;
  private readonly failovers: Counter<'family'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.fetches = new Counter({
      name: 'crawler_fetches_total',
      help: 'HTTP requests made by the downloader, by resource (page, sitemap, robots) and status class (1xx…5xx, or error: no response)',
      labelNames: ['resource', 'status_class'],
      registers,
    });
    this.duration = new Histogram({
      name: 'crawler_fetch_duration_seconds',
      help: 'Time of one request, connect to last byte read, by resource and outcome (response, or error: no response)',
      labelNames: ['resource', 'outcome'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.bytes = new Counter({
      name: 'crawler_fetch_bytes_total',
      help: 'Body bytes read off the wire for the bodies kept (before decoding), by resource',
      labelNames: ['resource'],
      registers,
    });
    this.decisions = new Counter({
      name: 'crawler_robots_decisions_total',
      help: 'What robots.txt made of each downloader turn: allowed, disallowed, deferred (robots.txt unreachable), fetched (the turn fetched robots.txt)',
      labelNames: ['decision'],
      registers,
    });
    this.failovers = new Counter({
      name: 'crawler_fetch_address_failovers_total',
      help: "Connections to one of a name's addresses that failed (refused, unreachable, connect timeout) and moved on to its next address, by the next one's family (ipv4, ipv6)",
      labelNames: ['family'],
      registers,
    });
    // Every series from the start, so that rate() and ratios see zeros rather than missing series.
    for (const family of ['ipv4', 'ipv6'] as const) this.failovers.inc({ family }, 0);
    for (const decision of ['allowed', 'disallowed', 'deferred', 'fetched'] as const) this.decisions.inc({ decision }, 0);
  }

  /** One request that got a response (`status`) or none (`null`), its time, and the body bytes it read. */
  fetched(resource: FetchResource, status: number | null, durationMs: number, wireBytes = 0): void {
    this.fetches.inc({ resource, status_class: statusClass(status) });
    this.duration.observe({ resource, outcome: status === null ? 'error' : 'response' }, durationMs / 1000);
    if (wireBytes > 0) this.bytes.inc({ resource }, wireBytes);
  }

  /**
   * A robots.txt fetch (its last hop's status; the time of all its hops, measured by the caller because
   * `RobotsFetch.durationMs` leaves out a hop that failed) and the decision it makes for the turn.
   */
  robotsFetched(robots: RobotsFetch, elapsedMs: number): void {
    this.fetched('robots', robots.status, elapsedMs);
    // A redirect to another host decides nothing yet: the chain goes on after the resolver.
    if (!robots.hop) this.robotsDecision(robots.policy.outcome === 'unreachable' ? 'deferred' : 'fetched');
  }

  /** A connection that failed, moving on to `to`, the name's next address. */
  addressFailover(to: string): void {
    this.failovers.inc({ family: to.includes(':') ? 'ipv6' : 'ipv4' });
  }

  robotsDecision(decision: RobotsDecision): void {
    this.decisions.inc({ decision });
  }
}

/** The status code's class (`2xx`…), or `error` when no response came (its kind is in `crawler_events_total`). */
export function statusClass(status: number | null): string {
  return status === null ? 'error' : `${Math.floor(status / 100)}xx`;
}
