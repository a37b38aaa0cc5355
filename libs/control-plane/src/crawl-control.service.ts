import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig, portRules } from '@crawler/config';
import { QueueName, SCHEMA_VERSION } from '@crawler/contracts';
import { FRONTIER_STORE, FrontierStore } from '@crawler/frontier-store';
import type { OutageRetries, QueueCounts } from '@crawler/queue';
import { AddressPolicy } from '@crawler/net';
import { PortPolicy } from '@crawler/url';
import { CompletionProbe, CrawlActivity, describeWaiting, HostSetAside, HostsAside, HostWaiting, PauseSwitch, PauseState, RecentError } from '@crawler/crawl-state';
import { RedisMemory, CrawlStats, Pipeline } from '@crawler/runtime';
import { CrawlMonitor } from './crawl-monitor.service';
import { BelowFloorHost, HostOverrides } from './host-overrides.service';
import { derivedTotals, PIPELINE_STAGES } from './pipeline-stages';
import { parseSeed, SeedRules } from './seed-list';

export class SeedError extends Error {
  constructor(readonly problems: { input: string; reason: string }[]) {
    super(`bad seeds: ${problems.map((p) => `"${p.input}" (${p.reason})`).join(', ')}`);
  }
}

/** One box of the diagram: the queue it consumes and what it turns out. */
export interface StageStatus {
  id: string;
  label: string;
  queue: string;
  /** Jobs waiting, running or delayed in its queue. */
  depth: number;
  counts: QueueCounts;
  /** Jobs of its queue handled, per second. */
  jobsPerSecond: number;
  /** Its output counter (`unit`), in total and per second. */
  unit: string;
  total: number;
  perSecond: number;
}

export interface TopHost {
  host: string;
  /** Requests among the crawl's most recent ones (CrawlActivity.REQUEST_WINDOW). */
  recentRequests: number;
  /** Pages fetched from the host in all, URLs waiting in its back queue, requests in flight. */
  fetched: number;
  queued: number;
  inFlight: number;
  /** The delay between two requests to it, and why (robots Crawl-delay, minimum, response time, backoff). */
  delayMs: number | null;
  delayCause: string | null;
  nextEligibleAt: string | null;
}

export interface CrawlStatus {
  /** Nothing queued, running or delayed anywhere, nothing in the failed set, and seeds were given. */
  complete: boolean;
  /** Failed work (kept in the failed set: GET /failed), by queue; a crawl with any is never complete. */
  failed: Record<string, number>;
  /** Messages retrying after an outage of Redis, S3 or PostgreSQL, by queue. */
  outageRetries: Record<string, OutageRetries>;
  /**
   * What stands between the crawl and "complete" besides work in progress (Redis memory full, outage retries,
   * failed work), in words; GET /status names the stores that are down first (LiveStatus).
   */
  waitingOn: string | null;
  /** Redis's memory use against its maxmemory; `full`: intake paused (REDIS_MEMORY_HIGH_WATER). Null without Redis. */
  redisMemory: RedisMemory | null;
  pending: number;
  /** URLs queued in the frontier or leased to a downloader. */
  frontier: number;
  queues: Record<string, QueueCounts>;
  totals: Record<string, number>;
  paused: boolean;
  pause: PauseState;
  /** URLs dispatched and not yet completed (leased): requests under way or about to start. */
  inFlight: number;
  /** Paused and nothing in flight: no request will start until resumed. */
  drained: boolean;
  /** Downloaders on the hash ring. */
  downloaders: number;
  stages: StageStatus[];
  /** Per second, over the last CrawlMonitor rateWindowMs: fetched, stored, errors, links.extracted, … */
  rates: Record<string, number>;
  topHosts: TopHost[];
  /** Hosts an operator set below the crawl-wide minimum delay (FRONTIER_ALLOW_DELAY_BELOW_MIN). */
  belowFloor: BelowFloorHost[];
  recentErrors: RecentError[];
  /** Hosts whose robots.txt is unreachable (5xx, 429, network): their URLs wait for its next try (at most 50 listed). */
  robotsWaiting: { count: number; hosts: HostWaiting[] };
  /**
   * Set while the crawl's only remaining work is those hosts (it is not complete, and nothing else will
   * happen before their next tries): says so in words, naming them.
   */
  waitingOnly: string | null;
  /** Hosts set aside, never fetched again in this crawl: robots.txt given up, or a Crawl-delay above the maximum. */
  hostsSetAside: HostSetAside[];
  at: string;
}

/** Seeds in, pause and resume, status out: the control plane shared by its HTTP API and the embedded CLI. */
@Injectable()
export class CrawlControlService implements OnModuleInit {
  /** The URL filter's port rule and the resolver's address rule, so that a seed they would drop is refused at submission instead. */
  private readonly seedRules: SeedRules;

  constructor(
    private readonly pipeline: Pipeline,
    private readonly probe: CompletionProbe,
    private readonly stats: CrawlStats,
    private readonly pauseSwitch: PauseSwitch,
    private readonly activity: CrawlActivity,
    private readonly monitor: CrawlMonitor,
    private readonly overrides: HostOverrides,
    @Inject(FRONTIER_STORE) private readonly frontierStore: FrontierStore,
    private readonly aside: HostsAside,
    @Inject(CRAWLER_CONFIG) config: CrawlerConfig,
  ) {
    this.seedRules = {
      ports: new PortPolicy(portRules(config)),
      addresses: new AddressPolicy({ allowPrivate: config.dns.allowPrivate, allowCidrs: config.dns.allowCidrs }),
    };
  }

  /** Nor does the control plane: its status and controls would read the frontier in the wrong shards. */
  async onModuleInit(): Promise<void> {
    await this.frontierStore.open?.();
  }

  /** Validates every seed first: one bad seed refuses the whole submission, so nothing half-starts. */
  async submitSeeds(inputs: string[]): Promise<string[]> {
    const parsed = inputs.map((input) => parseSeed(input, this.seedRules));
    const problems = parsed.flatMap((p) => (p.ok ? [] : [{ input: p.input, reason: p.reason }]));
    if (problems.length || parsed.length === 0) throw new SeedError(problems.length ? problems : [{ input: '', reason: 'no seeds given' }]);
    // A seed given twice (a URL and its bare domain, a list with repeats) is one seed.
    const urls = [...new Set(parsed.map((p) => (p as { url: string }).url))];
    for (let i = 0; i < urls.length; i += 1000) {
      const chunk = urls.slice(i, i + 1000).map((url) => ({ url, depth: 0, source: 'seed' as const, hops: 0 }));
      await this.pipeline.send(QueueName.FilterUrls, { v: SCHEMA_VERSION, urls: chunk });
    }
    await this.stats.count('seeds', urls.length);
    return urls;
  }

  /** No URL leaves the frontier until `resume`; what is in flight finishes, what arrives is queued. */
  pause(reason?: string): Promise<PauseState> {
    return this.pauseSwitch.pause(reason);
  }

  resume(): Promise<PauseState> {
    return this.pauseSwitch.resume();
  }

  async status(): Promise<CrawlStatus> {
    const [snapshot, reading, pause, recentErrors, busiest, robotsWaiting, hostsSetAside, belowFloor] = await Promise.all([
      this.probe.snapshot(),
      this.monitor.read(),
      this.pauseSwitch.state(),
      this.activity.recentErrors(),
      this.activity.topHosts(10),
      this.aside.listWaiting(50),
      this.aside.listSetAside(),
      this.overrides.belowFloor(),
    ]);
    const totals = reading.totals;
    const failed = Object.keys(snapshot.failed).length > 0;
    const complete = snapshot.pending === 0 && !failed && (totals.seeds ?? 0) > 0 && (await this.probe.isComplete());
    const rates = this.monitor.rates();
    const derived = derivedTotals(totals);
    const stages = PIPELINE_STAGES.map((stage): StageStatus => {
      const counts = reading.queues[stage.queue];
      return {
        id: stage.id,
        label: stage.label,
        queue: stage.queue,
        depth: counts.waiting + counts.active + counts.delayed,
        counts,
        jobsPerSecond: rates[`processed.${stage.queue}`] ?? 0,
        unit: stage.unit,
        total: derived[stage.counter] ?? totals[stage.counter] ?? 0,
        perSecond: rates[stage.counter] ?? 0,
      };
    });
    const inFlight = reading.frontier.leased;
    return {
      complete,
      failed: snapshot.failed,
      outageRetries: snapshot.outageRetries,
      waitingOn: snapshot.waitingOn,
      redisMemory: snapshot.redisMemory,
      pending: snapshot.pending,
      frontier: snapshot.frontier,
      queues: reading.queues,
      totals,
      paused: pause.paused,
      pause,
      inFlight,
      drained: pause.paused && inFlight === 0,
      downloaders: reading.downloaders,
      stages,
      rates,
      topHosts: await this.topHosts(busiest),
      belowFloor,
      recentErrors,
      robotsWaiting,
      waitingOnly: snapshot.waitingOnRobots ? describeWaiting(snapshot.waitingOnRobots) : null,
      hostsSetAside,
      at: new Date(reading.at).toISOString(),
    };
  }

  private topHosts(busiest: { host: string; requests: number }[]): Promise<TopHost[]> {
    return Promise.all(
      busiest.map(async ({ host, requests }) => {
        const info = await this.frontierStore.hostInfo(host);
        const override = info.delayMs == null ? undefined : await this.overrides.inForce(info.delayMs);
        return {
          host,
          recentRequests: requests,
          fetched: info.fetched,
          queued: info.queued,
          inFlight: info.inFlight,
          delayMs: override?.delayMs ?? info.politeness?.delayMs ?? null,
          delayCause: override ? (override.heldToFloor ? 'floor' : 'operator') : (info.politeness?.cause ?? null),
          nextEligibleAt: info.nextAt === null ? null : new Date(info.nextAt).toISOString(),
        };
      }),
    );
  }
}
