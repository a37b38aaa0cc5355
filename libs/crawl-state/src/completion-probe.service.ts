import { Inject, Injectable } from '@nestjs/common';
import { fetchQueue, PIPELINE_QUEUES, pluginQueue, QueueName } from '@crawler/contracts';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { FRONTIER_STORE, FrontierStore } from '@crawler/frontier-store';
import { DownloaderMembership } from '@crawler/hash-ring';
import { infrastructureCause, OutageRetries, QUEUE_TRANSPORT, QueueCounts, QueueTransport } from '@crawler/queue';
import { CrawlStats, describeRedisMemory, RedisMemory, RedisMemoryGauge } from '@crawler/runtime';
import { STATE_STORE, StateStore } from '@crawler/state';
import { HostSetAside, HostsAside, HostWaiting } from './hosts-aside.service';

export interface PipelineSnapshot {
  queues: Record<string, QueueCounts>;
  /** Jobs waiting, running or delayed anywhere in the pipeline, plus URLs in the frontier. */
  pending: number;
  /** URLs in the frontier (queued or leased to a downloader). */
  frontier: number;
  /** Jobs processed so far by every process. */
  processed: number;
  /**
   * Set when the only work left is hosts waiting for their robots.txt to come back (RFC 9309: disallow all
   * for now): those hosts, soonest next try first. The crawl ends when they are fetched or given up.
   */
  waitingOnRobots?: { count: number; hosts: HostWaiting[] };
  /**
   * Set when the only work left is URLs of hosts backed off for timeouts (FRONTIER_HOST_TIMEOUT_STRIKES):
   * those URLs are not counted as pending, so the crawl ends instead of waiting out the back-off, and
   * names the hosts.
   */
  backedOff?: HostSetAside[];
  /** Messages kept in the failed set, by queue (only queues with some): work the crawl has not done. */
  failed: Record<string, number>;
  /** Messages retrying after an outage of Redis, S3 or PostgreSQL, by queue (only queues with some). */
  outageRetries: Record<string, OutageRetries>;
  /** Redis's memory use (null without Redis or while unreadable); `full` pauses intake. */
  redisMemory: RedisMemory | null;
  /** What keeps the crawl from being complete besides ordinary work in progress, in words; null when nothing. */
  waitingOn: string | null;
}

/** Beyond this many waiting hosts, whether they are all that is left is not worked out (status says nothing). */
const ONLY_WAITING_CHECKED = 1000;

/**
 * Decides that a crawl is complete: nothing queued, running or delayed in any stage. Queue counts are read
 * one queue at a time, so a job moving between stages could be missed by one reading; a crawl is complete
 * only when two readings apart in time both see nothing pending and no job was processed in between.
 */
@Injectable()
export class CompletionProbe {
  /** The pipeline's queues and the work queues of the enabled plugins (`plugin.<name>`). */
  private readonly watched: readonly QueueName[];

  constructor(
    @Inject(QUEUE_TRANSPORT) private readonly queues: QueueTransport,
    @Inject(FRONTIER_STORE) private readonly frontierStore: FrontierStore,
    private readonly stats: CrawlStats,
    @Inject(CRAWLER_CONFIG) config: CrawlerConfig,
    private readonly aside: HostsAside,
    private readonly redisMemory: RedisMemoryGauge,
    @Inject(STATE_STORE) state: StateStore,
  ) {
    this.watched = [...PIPELINE_QUEUES, ...(config.plugins?.enabled ?? []).map(pluginQueue)];
    this.downloaders = new DownloaderMembership(state.namespace('downloaders'), { heartbeatMs: config.downloader.heartbeatMs });
  }

  /** The live downloaders, whose own fetch queues (`fetch.<id>`) are read with the pipeline's. */
  private readonly downloaders: DownloaderMembership;

  async snapshot(): Promise<PipelineSnapshot> {
    // A downloader's fetch jobs retrying through an S3 or Redis outage are work in progress like any other,
    // and what the status must name when the crawl waits on them.
    const shards = (await this.downloaders.live()).map(fetchQueue);
    const watched = [...this.watched, ...shards];
    const counts = await Promise.all(watched.map((q) => this.queues.counts(q)));
    const queues: Record<string, QueueCounts> = {};
    const failed: Record<string, number> = {};
    let pending = 0;
    watched.forEach((q, i) => {
      queues[q] = counts[i];
      pending += counts[i].waiting + counts[i].active + counts[i].delayed;
      if (counts[i].failed > 0) failed[q] = counts[i].failed;
    });
    // Only queues with delayed jobs can hold outage retries: the others are not read.
    const outageRetries: Record<string, OutageRetries> = {};
    await Promise.all(
      watched.map(async (q, i) => {
        const retries = counts[i].delayed > 0 ? await this.queues.outageRetries(q) : null;
        if (retries) outageRetries[q] = retries;
      }),
    );
    const totals = await this.stats.totals();
    let frontier = await this.frontierWork(totals);
    const backedOff = pending === 0 && frontier > 0 ? await this.onlyBackedOff() : undefined;
    if (backedOff) frontier = 0;
    pending += frontier;
    const processed = Object.entries(totals)
      .filter(([k]) => k.startsWith('processed.'))
      .reduce((sum, [, v]) => sum + v, 0);
    const waitingOnRobots = pending > 0 && pending === frontier ? await this.onlyWaiting() : undefined;
    const redisMemory = await this.redisMemory.read();
    const waitingOn = [redisMemory?.full ? describeRedisMemory(redisMemory) : null, describeRemaining(failed, outageRetries)].filter(Boolean).join('; ') || null;
    return {
      queues,
      pending,
      frontier,
      processed,
      failed,
      outageRetries,
      redisMemory,
      waitingOn,
      ...(waitingOnRobots ? { waitingOnRobots } : {}),
      ...(backedOff ? { backedOff } : {}),
    };
  }

  /** The backed-off hosts, when every back queue in use is theirs and nothing else is queued, leased or scheduled. */
  private async onlyBackedOff(): Promise<HostSetAside[] | undefined> {
    const stats = await this.frontierStore.stats();
    if (stats.leased > 0 || stats.scheduled > 0 || stats.front.some((n) => n > 0)) return undefined;
    const backedOff = await this.aside.listBackedOff();
    if (backedOff.length === 0 || backedOff.length > ONLY_WAITING_CHECKED) return undefined;
    const infos = await Promise.all(backedOff.map((h) => this.frontierStore.hostInfo(h.host)));
    const held = infos.filter((info) => info.nextAt !== null).length;
    return held === stats.backQueuesInUse ? backedOff : undefined;
  }

  /**
   * The waiting hosts, when nothing else is left: no URL leased, scheduled or in a front queue, and every
   * back queue in use held by a waiting host (one back queue per host).
   */
  private async onlyWaiting(): Promise<PipelineSnapshot['waitingOnRobots']> {
    const stats = await this.frontierStore.stats();
    if (stats.leased > 0 || stats.scheduled > 0 || stats.front.some((n) => n > 0)) return undefined;
    const waiting = await this.aside.listWaiting(ONLY_WAITING_CHECKED);
    if (waiting.count === 0 || waiting.count > ONLY_WAITING_CHECKED) return undefined;
    const infos = await Promise.all(waiting.hosts.map((h) => this.frontierStore.hostInfo(h.host)));
    const held = infos.filter((info) => info.nextAt !== null).length;
    return held === stats.backQueuesInUse ? waiting : undefined;
  }

  /**
   * URLs queued, leased or scheduled for a recrawl in the frontier (a recrawling crawl never ends by
   * itself). Once the page or byte budget is spent or the time limit reached nothing more is dispatched, so only the
   * leased URLs are work.
   */
  private async frontierWork(totals: Record<string, number>): Promise<number> {
    const stats = await this.frontierStore.work();
    const stopped = ['frontier.budget-spent', 'frontier.byte-budget-spent', 'frontier.time-limit'].some((key) => (totals[key] ?? 0) > 0);
    return stopped ? stats.leased : stats.size + stats.scheduled;
  }

  /**
   * Nothing pending, in two readings `settleMs` apart with no job processed in between: nothing more will
   * happen by itself. Complete only if, besides, nothing is left in the failed set.
   */
  async isSettled(settleMs = 250): Promise<PipelineSnapshot | null> {
    const first = await this.snapshot();
    if (first.pending > 0 || first.processed === 0) return null;
    await new Promise((r) => setTimeout(r, settleMs));
    const second = await this.snapshot();
    return second.pending === 0 && second.processed === first.processed ? second : null;
  }

  /** Settled with no failed message left: every piece of work was done. */
  async isComplete(settleMs = 250): Promise<boolean> {
    const settled = await this.isSettled(settleMs);
    return settled !== null && Object.keys(settled.failed).length === 0;
  }

  /**
   * Resolves when the crawl has settled (see isSettled): true when it is complete, false when failed
   * messages remain (the last snapshot names them) or on `signal`. `onTick` sees each snapshot (for progress
   * bars). `pollMs` and `settleMs` can be short where the counts are exact at any instant (in-process
   * queues): they are how long a finished crawl waits to be told so. A reading that fails because Redis is
   * down or refuses it (OOM) is waited out, as the queues wait it out: `onOutage` sees each such error.
   */
  async waitForCompletion(
    options: { pollMs?: number; settleMs?: number; onTick?: (s: PipelineSnapshot) => void; onOutage?: (error: unknown) => void; signal?: AbortSignal } = {},
  ) {
    const pollMs = options.pollMs ?? 200;
    for (;;) {
      if (options.signal?.aborted) return false;
      try {
        options.onTick?.(await this.snapshot());
        const settled = await this.isSettled(options.settleMs);
        if (settled) {
          options.onTick?.(settled);
          return Object.keys(settled.failed).length === 0;
        }
      } catch (error) {
        if (infrastructureCause(error) === null) throw error;
        options.onOutage?.(error);
      }
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }
}

/**
 * "3 messages of content-seen retrying after s3 errors since 12:00:01Z; 2 failed messages of parse (GET
 * /failed, replay once the cause is fixed)": what stands between the crawl and "complete" that ordinary
 * progress will not clear by itself soon.
 */
export function describeRemaining(failed: Record<string, number>, outageRetries: Record<string, OutageRetries>): string | null {
  const parts: string[] = [];
  for (const [queue, r] of Object.entries(outageRetries)) {
    const causes = Object.keys(r.causes)
      .map((c) => (c === 's3' ? 'S3' : c === 'redis' ? 'Redis' : c === 'postgresql' ? 'PostgreSQL' : c))
      .join(' and ');
    parts.push(`${r.messages} message${r.messages === 1 ? '' : 's'} of ${queue} retrying after ${causes} errors since ${r.since}`);
  }
  const failedCount = Object.values(failed).reduce((a, b) => a + b, 0);
  if (failedCount > 0) {
    const where = Object.entries(failed)
      .map(([q, n]) => `${q}: ${n}`)
      .join(', ');
    parts.push(`failed work left (${where}): see GET /failed or npm run failed, and replay it once the cause is fixed`);
  }
  return parts.length ? parts.join('; ') : null;
}
