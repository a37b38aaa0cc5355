import type { CrawlRun } from '../../bench/report/results';

/** A benchmark crawl's run as the report and the targets read it: 1,000 pages politely fetched from 10 hosts, at `pagesPerSecond`. */
export function benchCrawlRun(id: string, pagesPerSecond: number, extra: Partial<CrawlRun> = {}): CrawlRun {
  return {
    id,
    label: id,
    settings: '1,000 pages, delay 0',
    pages: 1000,
    seconds: 1000 / pagesPerSecond,
    pagesPerSecond,
    cpuMs: 2500,
    cpuMsPerPage: 2.5,
    processes: [{ name: `${id}-main`, cpuMs: 2500, peakRssBytes: 150 * 2 ** 20 }],
    peakRssBytes: 150 * 2 ** 20,
    web: {
      requests: 1010,
      pages: 1000,
      byStatus: { '200': 1010 },
      bytes: 30_000_000,
      windowMs: 5000,
      hostsVisited: 10,
      maxInFlightPerHost: 1,
      minIntervalMs: 12,
      minIdleGapMs: 0,
      robotsViolations: 0,
      beforeRobots: 0,
      repeatRequests: 0,
      maxInFlight: 10,
    },
    complete: true,
    ...extra,
  };
}
