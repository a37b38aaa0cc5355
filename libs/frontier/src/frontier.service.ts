import { Inject, Injectable, Optional } from '@nestjs/common';
import { CrawlUrl, FetchOutcome } from '@crawler/contracts';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { FRONTIER_STORE, FrontierStore } from '@crawler/frontier-store';
import { LOGGER, Logger } from '@crawler/logging';
import { CrawlActivity, CrawlStats } from '@crawler/runtime';
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
    /** The dashboard's recent errors and top hosts (absent in unit tests that build the service by hand). */
    @Optional() private readonly activity?: CrawlActivity,
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
    const host = await this.store.politeness(outcome.host);
    const decision = politeDelay(outcome, host.politeness, frontier, host.delayMs);
    let requeue: string | undefined;
    let giveUpOnHost = false;
    if ((outcome.kind === 'robots-fetched' || outcome.kind === 'skipped') && outcome.retry) {
      requeue = encodeEntry(outcome.retry);
    } else if (outcome.kind === 'deferred' && outcome.retry) {
      const attempts = (outcome.retry.attempts ?? 0) + 1;
      if (attempts <= frontier.maxRetries) requeue = encodeEntry({ ...outcome.retry, attempts });
      else giveUpOnHost = true;
    } else if (outcome.kind === 'fetched' && isSlowDown(outcome.status) && outcome.retry) {
      const attempts = (outcome.retry.attempts ?? 0) + 1;
      if (attempts <= frontier.maxRetries) requeue = encodeEntry({ ...outcome.retry, attempts });
      else await this.stats.count('error.retries-exhausted');
    }
    // A deferred host waits for its robots.txt to be tried again. One millisecond more than the delay:
    // Date.now() drops the fraction, and a fast answer (under a millisecond) could otherwise be followed by
    // the next request a fraction of a millisecond early.
    const nextAt = now + 1 + Math.max(decision.delayMs, outcome.kind === 'deferred' ? (outcome.retryAfterMs ?? 0) : 0);
    const audit = JSON.stringify({ at: now, event: outcome.kind, url: outcome.url, status: outcome.status, delayMs: decision.delayMs, cause: decision.cause, nextAt, requeued: !!requeue });
    const completed = await this.store.complete(
      outcome.leaseId,
      { nextAt, requeue, ip: outcome.ip, fetched: outcome.kind === 'fetched' && !requeue, politeness: decision.politeness, audit: [audit] },
      now,
    );
    if (!completed) {
      // Reclaimed (a downloader was presumed dead) or a redelivered outcome: the lease is no longer ours.
      await this.stats.count('frontier.stale-outcome');
      return;
    }
    if (giveUpOnHost) {
      // robots.txt stayed unreachable through every retry: the host's URLs are dropped, now and to come.
      const dropped = await this.store.purgeHost(outcome.host, now);
      // Deferred by an unreachable robots.txt, or by a name that kept failing to resolve (the DNS resolver's).
      await this.stats.count(outcome.error?.startsWith('DNS ') ? 'error.dns-unresolvable' : 'disallowed.robots-unreachable', dropped + 1);
    }
    if (frontier.recrawl && !requeue && outcome.revisit && outcome.retry) await this.store.audit(outcome.host, [await this.scheduleRecrawl(outcome, now)]);
    this.logger.debug({ event: 'politeness', host: outcome.host, delayMs: decision.delayMs, cause: decision.cause }, 'host rests');
    this.signal.wake();
    // Last, so that a failure here retries the job as a harmless stale outcome, never half a completion.
    await this.activity?.recordOutcome(outcome);
  }

  /**
   * Freshness: the page comes back after an interval that halves when it changed and doubles when it did
   * not (within [min, max]), and never before its `Expires`.
   */
  private async scheduleRecrawl(outcome: FetchOutcome, now: number): Promise<string> {
    const { recrawlInitialMs, recrawlMinMs, recrawlMaxMs, frontQueues } = this.config.frontier;
    const revisit = outcome.revisit!;
    const previous = outcome.retry!.revisit?.intervalMs;
    const intervalMs =
      previous === undefined
        ? recrawlInitialMs
        : Math.min(recrawlMaxMs, Math.max(recrawlMinMs, revisit.changed ? Math.round(previous / 2) : previous * 2));
    const dueAt = Math.max(now + intervalMs, revisit.expiresAt ?? 0);
    const entry: CrawlUrl = {
      url: outcome.url,
      depth: outcome.retry!.depth,
      source: 'recrawl',
      hops: 0,
      revisit: { etag: revisit.etag, lastModified: revisit.lastModified, bodyHash: revisit.bodyHash, intervalMs },
    };
    await this.store.schedule([{ host: outcome.host, priority: this.prioritizer.priority(entry, frontQueues), item: encodeEntry(entry), dueAt }]);
    await this.stats.count('frontier.recrawl-scheduled');
    return JSON.stringify({ at: now, event: 'recrawl-scheduled', url: outcome.url, changed: revisit.changed, intervalMs, dueAt });
  }
}
