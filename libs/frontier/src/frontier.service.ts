import { Inject, Injectable } from '@nestjs/common';
import { CrawlUrl, FetchOutcome } from '@crawler/contracts';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { FRONTIER_STORE, FrontierStore } from '@crawler/frontier-store';
import { LOGGER, Logger } from '@crawler/logging';
import { CrawlStats } from '@crawler/runtime';
import { encodeEntry } from './frontier-entry';
import { isSlowDown, politeDelay } from './politeness';
import { FRONTIER_PRIORITIZER, Prioritizer } from './prioritizer';
import { DispatchSignal } from './dispatch-signal';

/**
 * The frontier's two inputs: new URLs (prioritised into front queues) and fetch outcomes (which end the
 * URL's lease and set its host's next fetch time). Dispatch is FrontierDispatcher's.
 */
@Injectable()
export class FrontierService {
  constructor(
    @Inject(FRONTIER_STORE) private readonly store: FrontierStore,
    @Inject(FRONTIER_PRIORITIZER) private readonly prioritizer: Prioritizer,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly stats: CrawlStats,
    private readonly signal: DispatchSignal,
  ) {}

  async add(urls: CrawlUrl[], batchId?: string): Promise<void> {
    const { frontQueues } = this.config.frontier;
    const enqueued = await this.store.enqueue(
      urls.map((url) => ({ host: new URL(url.url).host, priority: this.prioritizer.priority(url, frontQueues), item: encodeEntry(url) })),
      Date.now(),
      batchId,
    );
    await this.stats.count(enqueued ? 'frontier.queued' : 'frontier.repeated-batch', urls.length);
    this.signal.wake();
  }

  async done(outcome: FetchOutcome): Promise<void> {
    const now = Date.now();
    const { frontier } = this.config;
    const host = await this.store.hostInfo(outcome.host);
    const decision = politeDelay(outcome, host.politeness, frontier, host.delayMs);
    let requeue: string | undefined;
    if ((outcome.kind === 'robots-fetched' || outcome.kind === 'skipped') && outcome.retry) {
      requeue = encodeEntry(outcome.retry);
    } else if (outcome.kind === 'fetched' && isSlowDown(outcome.status) && outcome.retry) {
      const attempts = (outcome.retry.attempts ?? 0) + 1;
      if (attempts <= frontier.maxRetries) requeue = encodeEntry({ ...outcome.retry, attempts });
      else await this.stats.count('error.retries-exhausted');
    }
    const nextAt = now + decision.delayMs;
    const completed = await this.store.complete(
      outcome.leaseId,
      { nextAt, requeue, ip: outcome.ip, fetched: outcome.kind === 'fetched' && !requeue, politeness: decision.politeness },
      now,
    );
    if (!completed) {
      // Reclaimed (a downloader was presumed dead) or a redelivered outcome: the lease is no longer ours.
      await this.stats.count('frontier.stale-outcome');
      return;
    }
    await this.store.audit(outcome.host, [
      JSON.stringify({ at: now, event: outcome.kind, url: outcome.url, status: outcome.status, delayMs: decision.delayMs, cause: decision.cause, nextAt, requeued: !!requeue }),
    ]);
    this.logger.debug({ event: 'politeness', host: outcome.host, delayMs: decision.delayMs, cause: decision.cause }, 'host rests');
    this.signal.wake();
  }
}
