import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { fetchQueue, PIPELINE_QUEUES, QueueName } from '@crawler/contracts';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { FRONTIER_STORE, FrontierStats, FrontierStore } from '@crawler/frontier-store';
import { DownloaderMembership } from '@crawler/hash-ring';
import { LOGGER, Logger } from '@crawler/logging';
import { QUEUE_TRANSPORT, QueueCounts, QueueTransport } from '@crawler/queue';
import { CrawlStats } from '@crawler/runtime';
import { STATE_STORE, StateStore } from '@crawler/state';
import { derivedTotals, RATE_COUNTERS } from './pipeline-stages';

export interface CrawlMonitorOptions {
  /** How often the pipeline is sampled for the throughput history. @defaultValue 2000 */
  sampleMs: number;
  /** Samples kept (the chart's span is sampleMs × keep: 30 minutes by default). @defaultValue 900 */
  keep: number;
  /** Rates in the status are averaged over this long. @defaultValue 10000 */
  rateWindowMs: number;
}

export const CRAWL_MONITOR_OPTIONS = Symbol('CRAWL_MONITOR_OPTIONS');
export const DEFAULT_MONITOR_OPTIONS: CrawlMonitorOptions = { sampleMs: 2000, keep: 900, rateWindowMs: 10_000 };

/** One look at the whole pipeline. */
export interface PipelineReading {
  at: number;
  /** Every pipeline queue; `fetch` is the sum of the live downloaders' shards. */
  queues: Record<string, QueueCounts>;
  /** Raw crawl totals. */
  totals: Record<string, number>;
  frontier: FrontierStats;
  /** Downloaders on the hash ring. */
  downloaders: number;
}

/** A reading boiled down to what the history keeps. */
export interface Sample {
  t: number;
  counters: Record<string, number>;
  /** Jobs waiting, running or delayed in each queue. */
  depths: Record<string, number>;
  /** URLs in the frontier (queued or leased) and leased. */
  frontier: number;
  inFlight: number;
}

/** A point of the throughput chart: rates since the previous sample, and the work on hand. */
export interface HistoryPoint {
  t: number;
  fetched: number;
  stored: number;
  errors: number;
  links: number;
  /** Jobs queued in every stage plus URLs in the frontier. */
  pending: number;
}

/**
 * The control plane's memory of the crawl: samples of the totals and queue depths every `sampleMs`, kept in
 * a ring of `keep` (in this process only; every control-plane replica keeps its own), from which it answers
 * rates (per second, over the last `rateWindowMs`) and the throughput history the dashboard charts.
 */
@Injectable()
export class CrawlMonitor implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly samples: Sample[] = [];
  private readonly membership: DownloaderMembership;
  private timer?: NodeJS.Timeout;
  private sampling?: Promise<void>;
  private failing = false;

  constructor(
    @Inject(QUEUE_TRANSPORT) private readonly queues: QueueTransport,
    @Inject(FRONTIER_STORE) private readonly frontierStore: FrontierStore,
    @Inject(STATE_STORE) state: StateStore,
    @Inject(CRAWLER_CONFIG) config: CrawlerConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly stats: CrawlStats,
    @Inject(CRAWL_MONITOR_OPTIONS) readonly options: CrawlMonitorOptions,
  ) {
    this.membership = new DownloaderMembership(state.namespace('downloaders'), { heartbeatMs: config.downloader.heartbeatMs });
  }

  onApplicationBootstrap() {
    this.tick();
    this.timer = setInterval(() => this.tick(), this.options.sampleMs);
    this.timer.unref();
  }

  /** Before the stores close (their own shutdown hooks), so that no sample runs into a closed store. */
  async beforeApplicationShutdown() {
    clearInterval(this.timer);
    await this.sampling;
  }

  async read(): Promise<PipelineReading> {
    const live = await this.membership.live();
    const shards = live.map((id) => fetchQueue(id));
    const [counts, shardCounts, totals, frontier] = await Promise.all([
      Promise.all(PIPELINE_QUEUES.map((q) => this.queues.counts(q))),
      Promise.all(shards.map((q) => this.queues.counts(q))),
      this.stats.totals(),
      this.frontierStore.stats(),
    ]);
    const queues: Record<string, QueueCounts> = {};
    PIPELINE_QUEUES.forEach((q, i) => (queues[q] = { ...counts[i] }));
    const fetch = queues[QueueName.Fetch];
    for (const c of shardCounts) {
      fetch.waiting += c.waiting;
      fetch.active += c.active;
      fetch.delayed += c.delayed;
      fetch.failed += c.failed;
    }
    return { at: Date.now(), queues, totals, frontier, downloaders: live.length };
  }

  /** Reads the pipeline now and adds the reading to the history. */
  async sample(): Promise<Sample> {
    const reading = await this.read();
    const sample = toSample(reading);
    this.samples.push(sample);
    if (this.samples.length > this.options.keep) this.samples.splice(0, this.samples.length - this.options.keep);
    return sample;
  }

  /** Per-second rates of RATE_COUNTERS over the last `rateWindowMs` (zeros until two samples exist). */
  rates(): Record<string, number> {
    const latest = this.samples.at(-1);
    const rates: Record<string, number> = Object.fromEntries(RATE_COUNTERS.map((k) => [k, 0]));
    if (!latest) return rates;
    let base = latest;
    for (let i = this.samples.length - 2; i >= 0; i--) {
      base = this.samples[i];
      if (latest.t - base.t >= this.options.rateWindowMs) break;
    }
    const seconds = (latest.t - base.t) / 1000;
    if (seconds <= 0) return rates;
    for (const key of RATE_COUNTERS) rates[key] = round(Math.max(0, (latest.counters[key] ?? 0) - (base.counters[key] ?? 0)) / seconds);
    return rates;
  }

  /** The throughput chart's points after `since` (ms since epoch), oldest first. */
  history(since = 0): HistoryPoint[] {
    const points: HistoryPoint[] = [];
    for (let i = 1; i < this.samples.length; i++) {
      const [a, b] = [this.samples[i - 1], this.samples[i]];
      if (b.t <= since) continue;
      const seconds = (b.t - a.t) / 1000;
      const rate = (key: string) => (seconds > 0 ? round(Math.max(0, (b.counters[key] ?? 0) - (a.counters[key] ?? 0)) / seconds) : 0);
      const pending = Object.values(b.depths).reduce((n, d) => n + d, 0) + b.frontier;
      points.push({ t: b.t, fetched: rate('fetched'), stored: rate('stored'), errors: rate('errors'), links: rate('links.extracted'), pending });
    }
    return points;
  }

  /** One sample at a time; a failed one (Redis away) is logged once per outage and retried next tick. */
  private tick() {
    if (this.sampling) return;
    this.sampling = this.sample()
      .then(
        () => {
          if (this.failing) this.logger.info({ event: 'monitor-recovered' }, 'pipeline sampling works again');
          this.failing = false;
        },
        (error) => {
          if (!this.failing) this.logger.warn({ event: 'monitor-sample-failed', err: error }, 'could not sample the pipeline; retrying every sample period');
          this.failing = true;
        },
      )
      .finally(() => (this.sampling = undefined));
  }
}

function toSample(reading: PipelineReading): Sample {
  const depths: Record<string, number> = {};
  for (const [queue, c] of Object.entries(reading.queues)) depths[queue] = c.waiting + c.active + c.delayed;
  return { t: reading.at, counters: derivedTotals(reading.totals), depths, frontier: reading.frontier.size, inFlight: reading.frontier.leased };
}

const round = (n: number) => Math.round(n * 100) / 100;
