import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { CrawlUrl, FetchOutcome } from '@crawler/contracts';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { Completion, FRONTIER_STORE, FrontierStore } from '@crawler/frontier-store';
import { LOGGER, Logger } from '@crawler/logging';
import {
  CrawlActivity,
  FailedUrls,
  HostsAside,
  HostWaiting,
  HubLinks,
  robotsFailureInWords,
  SetAsideReason,
  SiteSettingsService,
  UnreachedHostsRegistry,
} from '@crawler/crawl-state';
import { CrawlStats } from '@crawler/runtime';
import { hostOf, registrableDomain } from '@crawler/url';
import { encodeEntry } from './frontier-entry';
import { isSlowDown, isStrike, politeDelay } from './politeness';
import { FRONTIER_PRIORITIZER, PrioritizerChain } from './prioritizer';
import { DispatchSignal } from './dispatch-signal';
import { recrawlInterval, sitemapChangeMs } from './recrawl-policy';
import { classifyFailure, retryDelayMs } from './retry-policy';

/** A URL given up on: why, and how many requests it had. */
interface GiveUp {
  reason: string;
  attempts: number;
}

/**
 * The frontier's two inputs: new URLs (prioritised into front queues) and fetch outcomes (which end the
 * URL's lease and set its host's next fetch time). Dispatch is FrontierDispatcher's.
 */
@Injectable()
export class FrontierService implements OnModuleInit {
  constructor(
    @Inject(FRONTIER_STORE) private readonly store: FrontierStore,
    @Inject(FRONTIER_PRIORITIZER) private readonly prioritizer: PrioritizerChain,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly stats: CrawlStats,
    private readonly signal: DispatchSignal,
    /** The dashboard's recent errors and top hosts. */
    private readonly activity: CrawlActivity,
    /** Hosts waiting for robots.txt and hosts set aside. */
    private readonly aside: HostsAside,
    /** Hosts no request could be sent to, for the crawl's "why". */
    private readonly unreached: UnreachedHostsRegistry,
    /** The URLs given up on, with why. */
    private readonly failedUrls: FailedUrls,
    /** New URLs per page, for the recrawl policy `hubs`. */
    private readonly hubLinks: HubLinks,
    /** Per-site settings: delay floor, depth, page and byte budgets and concurrency of each host's site. */
    private readonly sites: SiteSettingsService,
  ) {}

  /** The frontier does not boot on a store it must not crawl on (a shard count other than its crawl's). */
  async onModuleInit(): Promise<void> {
    await this.store.open?.();
  }

  async add(urls: CrawlUrl[], batchId?: string): Promise<void> {
    const { frontQueues } = this.config.frontier;
    const priorities = await this.prioritizer.of(urls, frontQueues);
    const items = urls.map((url, i) => ({ host: hostOf(url.url), depth: url.depth, priority: priorities[i], item: encodeEntry(url) }));
    const kept = await this.withoutSetAside(await this.withSiteSettings(items));
    // The store resumes a redelivered batch slice by slice, so the list it is given must be the same list: a
    // host set aside in between makes it another one (hosts are only ever added to that list, so the number of
    // URLs left out names it). A batch enqueued again in full costs second fetches, never lost URLs.
    const storeBatchId = batchId && kept.length < items.length ? `${batchId}.${items.length - kept.length}` : batchId;
    const added = await this.store.enqueue(kept, Date.now(), storeBatchId);
    if (added) await this.stats.count('frontier.queued', added);
    // A redelivered batch: the part enqueued before (all of it, unless a crash cut it short) is not added again.
    if (added < kept.length) await this.stats.count('frontier.repeated-batch', kept.length - added);
    await this.prune();
    this.signal.wake();
  }

  /**
   * The frontier's capacity (FRONTIER_MAX_QUEUED): past it the least wanted URLs go, so that a crawl that
   * finds links faster than it can fetch them keeps the ones its prioritizer ranks highest.
   */
  private async prune(): Promise<void> {
    const { maxQueued } = this.config.frontier;
    if (maxQueued <= 0) return;
    const dropped = await this.store.prune(maxQueued);
    if (dropped === 0) return;
    await this.stats.count('frontier.pruned', dropped);
    this.logger.info({ event: 'frontier-pruned', dropped, maxQueued }, `frontier full: dropped the ${dropped} lowest-priority URLs (FRONTIER_MAX_QUEUED ${maxQueued})`);
  }

  /**
   * A site's `maxDepth`: its hosts' URLs found deeper are dropped on arrival (`frontier.site-depth`), as
   * URL_FILTER_MAX_DEPTH drops any URL deeper than the crawl's. A redelivered batch drops the same ones again.
   * A site's `concurrency` goes with each URL kept, so that the store holds the host to it from its first claim.
   */
  private async withSiteSettings<T extends { host: string; depth: number }>(items: T[]): Promise<(T & { hostLimit?: number | null })[]> {
    if (!(await this.sites.any())) return items;
    const kept: (T & { hostLimit: number | null })[] = [];
    for (const item of items) {
      const { maxDepth, concurrency } = (await this.sites.forHost(item.host)).settings;
      if (maxDepth === undefined || item.depth <= maxDepth) kept.push({ ...item, hostLimit: concurrency ?? null });
    }
    if (kept.length < items.length) await this.stats.count('frontier.site-depth', items.length - kept.length);
    return kept;
  }

  /**
   * URLs of a host set aside are dropped on arrival and counted with it (the store's purge would drop them
   * too, uncounted, when the host's turn came).
   */
  private async withoutSetAside<T extends { host: string }>(items: T[]): Promise<T[]> {
    const reasons = await this.aside.setAsideReasons();
    if (!reasons.size) return items;
    const dropped = new Map<string, number>();
    const kept = items.filter((item) => !reasons.has(item.host) || (dropped.set(item.host, (dropped.get(item.host) ?? 0) + 1), false));
    for (const [host, n] of dropped) {
      await this.aside.addUrls(host, n);
      await this.stats.count(`set-aside.${reasons.get(host)}`, n);
    }
    return kept;
  }

  async done(outcome: FetchOutcome): Promise<void> {
    const now = Date.now();
    const { frontier } = this.config;
    const host = await this.store.politeness(outcome.host);
    const site = (await this.sites.forHost(outcome.host)).settings;
    const decision = politeDelay(outcome, host.politeness, frontier, host.delayMs, site.minDelayMs);
    let requeue: string | undefined;
    let retryLater: Completion['retryLater'];
    let gaveUp: GiveUp | undefined;
    const failure = classifyFailure(outcome);
    // Requests this URL has had, this one included: turns answered 429/503 and transient failures.
    const requests = (outcome.retry?.attempts ?? 0) + (outcome.retry?.failures ?? 0) + 1;
    let setAside: { reason: SetAsideReason; detail: string } | 'dns' | undefined;
    const crawlDelayMs = outcome.crawlDelayMs ?? 0;
    const unreachable = outcome.robotsUnreachable;
    if (frontier.maxCrawlDelayMs > 0 && crawlDelayMs > frontier.maxCrawlDelayMs) {
      // Waiting that long would hold a bounded crawl open for one host: set it aside and say so (Nutch, StormCrawler).
      setAside = { reason: 'crawl-delay', detail: `Crawl-delay ${crawlDelayMs / 1000} s > FRONTIER_MAX_CRAWL_DELAY_MS ${frontier.maxCrawlDelayMs / 1000} s` };
    } else if ((outcome.kind === 'robots-fetched' || outcome.kind === 'skipped' || outcome.kind === 'resolved') && outcome.retry) {
      requeue = encodeEntry(outcome.retry);
    } else if (outcome.kind === 'deferred' && (unreachable || outcome.cause === 'robots')) {
      // Waiting on robots.txt: the downloader plans the tries (backoff, Retry-After) and says when to give up,
      // so these turns count toward no retry limit here (nor toward a DNS failure).
      if (!unreachable?.giveUp && outcome.retry) requeue = encodeEntry(outcome.retry);
      else if (unreachable)
        setAside = {
          reason: 'robots-unreachable',
          detail: `robots.txt unreachable for ${Math.round((now - unreachable.since) / 1000)} s (${unreachable.tries} tries, last ${robotsFailureInWords(outcome)})`,
        };
    } else if (outcome.kind === 'deferred' && outcome.retry) {
      const attempts = (outcome.retry.attempts ?? 0) + 1;
      if (attempts <= frontier.maxRetries) requeue = encodeEntry({ ...outcome.retry, attempts });
      else setAside = 'dns';
    } else if (outcome.kind === 'fetched' && isSlowDown(outcome.status) && outcome.retry) {
      const attempts = (outcome.retry.attempts ?? 0) + 1;
      if (attempts <= frontier.maxRetries) requeue = encodeEntry({ ...outcome.retry, attempts });
      else gaveUp = { reason: failure!.reason, attempts: requests };
    } else if (failure && failure.kind !== 'slow-down' && outcome.retry) {
      // The URL waits on its own (the store holds it until due) while its host goes on at its usual pace: a
      // page that failed is no reason to stop fetching the site's others, and no reason to fetch it sooner.
      const failures = (outcome.retry.failures ?? 0) + 1;
      const waitMs = failure.kind === 'transient' ? retryDelayMs(failures, frontier, Math.random(), outcome.retryAfterMs) : undefined;
      if (waitMs !== undefined) {
        const entry = { ...outcome.retry, failures };
        const [priority] = await this.prioritizer.of([entry], frontier.frontQueues);
        retryLater = { item: encodeEntry(entry), priority, dueAt: now + waitMs };
      } else if (failure.kind === 'transient' || outcome.kind === 'error') {
        // A 4xx is the site's own final answer (counted, in the fetch log); a request that got none is a failure.
        gaveUp = { reason: failure.reason, attempts: requests };
      }
    }
    // The host was set aside while this URL was out (giveUpWaiting): the URL joins the host's dropped ones.
    const droppedWith = (requeue || retryLater) && !setAside ? (await this.aside.setAsideReasons()).get(outcome.host) : undefined;
    if (droppedWith) {
      requeue = retryLater = undefined;
      await this.aside.addUrls(outcome.host, 1);
      await this.stats.count(`set-aside.${droppedWith}`);
    }
    // A deferred host waits for its robots.txt to be tried again. One millisecond more than the delay:
    // Date.now() drops the fraction, and a fast answer (under a millisecond) could otherwise be followed by
    // the next request a fraction of a millisecond early.
    const nextAt = now + 1 + Math.max(decision.delayMs, outcome.kind === 'deferred' ? (outcome.retryAfterMs ?? 0) : 0);
    const audit = JSON.stringify({
      at: now,
      event: outcome.kind,
      url: outcome.url,
      status: outcome.status,
      // The address the request went to: after a failover, not the one it was paced on (docs/frontier.md §7).
      ...(outcome.ip ? { ip: outcome.ip } : {}),
      ...(outcome.errorKind ? { errorKind: outcome.errorKind } : {}),
      delayMs: decision.delayMs,
      cause: decision.cause,
      nextAt,
      requeued: !!requeue,
      ...(retryLater ? { retryAt: retryLater.dueAt } : {}),
      ...(gaveUp ? { gaveUp: gaveUp.reason } : {}),
    });
    const fetched = outcome.kind === 'fetched' && !requeue && !retryLater;
    const ticket = this.signal.endingLease();
    const completed = await this.store.complete(
      outcome.leaseId,
      {
        nextAt,
        requeue,
        retryLater,
        ip: outcome.ip,
        site: outcome.ip ? siteOf(outcome.url) : undefined,
        fetched,
        politeness: decision.politeness,
        audit: [audit],
        // The site's concurrency as it is now: a live change reaches a host busy with the crawl at its next completion.
        hostLimit: site.concurrency ?? null,
      },
      now,
    );
    if (!completed) {
      // Reclaimed (a downloader was presumed dead) or a redelivered outcome: the lease is no longer ours.
      await this.stats.count('frontier.stale-outcome');
      return;
    }
    this.signal.leaseEnded(ticket, fetched);
    if (retryLater) await this.stats.count(`frontier.retry.${failure!.reason}`);
    if (site.maxPages !== undefined && outcome.kind === 'fetched' && !requeue && !retryLater) await this.spendSiteBudget(outcome.host, site.maxPages, now);
    if (site.maxBytes !== undefined && outcome.kind === 'fetched' && outcome.bytes) await this.spendSiteBytes(outcome.host, site.maxBytes, outcome.bytes, now);
    if (gaveUp) await this.giveUp(outcome, gaveUp, now);
    if (setAside === 'dns') {
      // The name kept failing to resolve: the host's URLs are dropped, now and to come.
      await this.stats.count('error.dns-unresolvable', (await this.store.purgeHost(outcome.host, now)) + 1);
      await this.unreached.record('dns-failed', outcome.host, outcome.error ?? 'the name kept failing to resolve');
    } else if (setAside) {
      await this.setAside(outcome, setAside.reason, setAside.detail, now);
    } else if (outcome.kind === 'deferred' && unreachable && !droppedWith) {
      const keepMs = Math.max(unreachable.nextTryAt, unreachable.giveUpAt) - now + frontier.leaseMs;
      const iso = (ms: number) => new Date(ms).toISOString();
      await this.aside.waiting(
        {
          host: outcome.host,
          since: iso(unreachable.since),
          nextTryAt: iso(unreachable.nextTryAt),
          giveUpAt: iso(unreachable.giveUpAt),
          tries: unreachable.tries,
          status: outcome.status,
          error: outcome.error,
          errorKind: outcome.errorKind,
        },
        keepMs,
      );
    } else if (outcome.kind === 'robots-fetched') {
      await this.aside.doneWaiting(outcome.host);
    }
    const strikes = frontier.hostTimeoutStrikes;
    const timeouts = decision.politeness.timeouts ?? 0;
    if (strikes > 0 && isStrike(outcome) && timeouts >= strikes) await this.backOff(outcome, timeouts, nextAt);
    else if (strikes > 0 && (host.politeness?.timeouts ?? 0) >= strikes && !timeouts) {
      // It answered: its back-off is over and it is no longer reported.
      await this.aside.answered(outcome.host);
    }
    if (frontier.recrawl && !requeue && outcome.revisit && outcome.retry) await this.store.audit(outcome.host, [await this.scheduleRecrawl(outcome, now)]);
    this.logger.debug({ event: 'politeness', host: outcome.host, delayMs: decision.delayMs, cause: decision.cause }, 'host rests');
    this.signal.wake();
    // Last, so that a failure here retries the job as a harmless stale outcome, never half a completion.
    await this.activity.recordOutcome(outcome);
  }

  /**
   * A site's `maxPages`: once one of its hosts has had that many pages, the host's other URLs are dropped, now
   * and to come (the store's purge, which also caps the host's budget), counted as `frontier.site-budget` and
   * written to the host's audit. Pages already in flight then (a host allowed more than one) still count.
   */
  private async spendSiteBudget(host: string, maxPages: number, now: number): Promise<void> {
    const { fetched, budget } = await this.store.hostInfo(host);
    if (fetched < maxPages || (budget !== null && budget !== undefined && budget <= fetched)) return;
    const dropped = await this.store.purgeHost(host, now);
    await this.store.audit(host, [JSON.stringify({ at: now, event: 'site-budget', maxPages, fetched, dropped })]);
    await this.stats.count('frontier.site-budget', dropped);
    this.logger.info({ event: 'site-budget-spent', host, maxPages, dropped }, `${host} had its site's ${maxPages} pages (maxPages): ${dropped} URLs dropped`);
  }

  /**
   * A site's `maxBytes`: the page's body bytes go to its host's count (atomic, shared by every replica); the
   * completion that brings it to the budget drops the host's other URLs, now and to come (the store's purge),
   * counted as `frontier.site-byte-budget` and written to the host's audit. Pages in flight then still count.
   */
  private async spendSiteBytes(host: string, maxBytes: number, bytes: number, now: number): Promise<void> {
    const spent = await this.sites.spendBytes(host, bytes);
    if (spent < maxBytes || spent - bytes >= maxBytes) return;
    const dropped = await this.store.purgeHost(host, now);
    await this.store.audit(host, [JSON.stringify({ at: now, event: 'site-byte-budget', maxBytes, spent, dropped })]);
    await this.stats.count('frontier.site-byte-budget', dropped);
    this.logger.info({ event: 'site-byte-budget-spent', host, maxBytes, spent, dropped }, `${host} had its site's ${maxBytes} bytes (maxBytes): ${dropped} URLs dropped`);
  }

  /**
   * The URL's tries are over: counted (`failed-urls`, and `failed-urls.<reason>`) and recorded with its reason
   * for `GET /failed-urls` and the crawl's summary.
   */
  private async giveUp(outcome: FetchOutcome, gaveUp: GiveUp, now: number): Promise<void> {
    await this.stats.count('failed-urls');
    await this.stats.count(`failed-urls.${gaveUp.reason}`);
    await this.failedUrls.record({
      at: new Date(now).toISOString(),
      url: outcome.url,
      host: outcome.host,
      reason: gaveUp.reason,
      attempts: gaveUp.attempts,
      ...(outcome.status !== undefined ? { status: outcome.status } : {}),
      ...(outcome.error ? { error: outcome.error } : {}),
    });
    this.logger.warn({ event: 'url-failed', url: outcome.url, reason: gaveUp.reason, attempts: gaveUp.attempts }, `gave up on ${outcome.url}: ${gaveUp.reason}`);
  }

  /**
   * The host's URLs are dropped, now and to come (the store's purge), counted (`set-aside.<reason>`: URLs,
   * `hosts-set-aside.<reason>`: hosts) and listed by name with the reason, for the status and the summary.
   */
  private setAside(outcome: FetchOutcome, reason: SetAsideReason, detail: string, now: number): Promise<void> {
    // The URL of this turn was not put back: it is one of the URLs dropped.
    return this.setAsideHost(outcome.host, reason, detail, outcome.retry && outcome.kind !== 'fetched' ? 1 : 0, now);
  }

  private async setAsideHost(host: string, reason: SetAsideReason, detail: string, inHand: number, now: number): Promise<void> {
    const urls = (await this.store.purgeHost(host, now)) + inHand;
    await this.aside.setAside(host, reason, detail, urls);
    await this.stats.count(`set-aside.${reason}`, urls);
    await this.stats.count(`hosts-set-aside.${reason}`);
    this.logger.warn({ event: 'host-set-aside', host, reason, detail, urls }, `host set aside: ${detail}`);
  }

  /**
   * Gives up hosts waiting for their robots.txt before DOWNLOADER_ROBOTS_UNREACHABLE_MAX_MS: the embedded crawl
   * does so once they are all it has left and have been for CRAWL_ROBOTS_IDLE_WAIT_MS (`waitedMs`), rather than
   * hold the run open for the rest of that time. Each is set aside as `robots-unreachable` with its last failure.
   */
  async giveUpWaiting(hosts: HostWaiting[], waitedMs: number): Promise<void> {
    const now = Date.now();
    for (const waiting of hosts) {
      const since = Math.round((now - Date.parse(waiting.since)) / 1000);
      const detail = `robots.txt unreachable for ${since} s (${waiting.tries} tries, last ${robotsFailureInWords(waiting)}); given up after the crawl had nothing else left for ${Math.round(waitedMs / 1000)} s (CRAWL_ROBOTS_IDLE_WAIT_MS)`;
      await this.setAsideHost(waiting.host, 'robots-unreachable', detail, 0, now);
    }
    this.signal.wake();
  }

  /**
   * The strike rule: a host whose requests keep timing out rests for the back-off the delay decided, its
   * URLs kept for its next turn; meanwhile it is listed by name (status, summary), and a crawl with nothing
   * else left ends instead of waiting for it.
   */
  private async backOff(outcome: FetchOutcome, timeouts: number, nextAt: number): Promise<void> {
    const { queued } = await this.store.hostInfo(outcome.host);
    const detail = `${timeouts} URLs timed out in a row (FRONTIER_HOST_TIMEOUT_STRIKES ${this.config.frontier.hostTimeoutStrikes}), the last ${outcome.errorKind}: ${outcome.error ?? ''}; backed off for ${Math.round((nextAt - Date.now()) / 1000)} s`;
    await this.aside.backedOff(outcome.host, detail, nextAt, queued);
    await this.stats.count('hosts-backed-off.timeouts');
    this.logger.warn({ event: 'host-backed-off', host: outcome.host, reason: 'timeouts', timeouts, nextAt, urls: queued }, `host backed off: ${detail}`);
  }

  /**
   * Freshness: the page comes back after an interval that adapts to it (recrawlInterval, by
   * FRONTIER_RECRAWL_POLICY; the first from its sitemap's `<changefreq>` or `<lastmod>` when it came from
   * one), and never before the end of its freshness lifetime (`Cache-Control: max-age`, else `Expires`).
   */
  private async scheduleRecrawl(outcome: FetchOutcome, now: number): Promise<string> {
    const { recrawlInitialMs, recrawlMinMs, recrawlMaxMs, recrawlPolicy, frontQueues } = this.config.frontier;
    const revisit = outcome.revisit!;
    const previous = outcome.retry!.revisit;
    // The page's count of new URLs, read at each scheduling: what it grew by since the last one is what the
    // page's last fetch yielded (its links reach URL-seen after the outcome reaches here).
    const links = recrawlPolicy === 'hubs' && previous?.intervalMs !== undefined ? await this.hubLinks.count(outcome.url) : undefined;
    const newLinks = links !== undefined && previous?.links !== undefined ? links - previous.links : undefined;
    const intervalMs = recrawlInterval(
      { previousMs: previous?.intervalMs, changed: revisit.changed, newLinks, sitemapMs: sitemapChangeMs(outcome.retry!, now) },
      { initialMs: recrawlInitialMs, minMs: recrawlMinMs, maxMs: recrawlMaxMs },
    );
    const dueAt = Math.max(now + intervalMs, revisit.expiresAt ?? 0);
    const entry: CrawlUrl = {
      url: outcome.url,
      depth: outcome.retry!.depth,
      source: 'recrawl',
      hops: 0,
      revisit: { etag: revisit.etag, lastModified: revisit.lastModified, bodyHash: revisit.bodyHash, intervalMs, ...(links !== undefined ? { links } : {}) },
    };
    const [priority] = await this.prioritizer.of([entry], frontQueues);
    await this.store.schedule([{ host: outcome.host, priority, item: encodeEntry(entry), dueAt }]);
    await this.stats.count('frontier.recrawl-scheduled');
    if (newLinks !== undefined) await this.stats.count(newLinks > 0 ? 'frontier.recrawl-hub' : 'frontier.recrawl-leaf');
    return JSON.stringify({
      at: now,
      event: 'recrawl-scheduled',
      url: outcome.url,
      changed: revisit.changed,
      ...(newLinks !== undefined ? { newLinks } : {}),
      intervalMs,
      dueAt,
    });
  }
}

/** The registrable domain a URL's host belongs to: what an address's per-IP allowance counts (see PerIpAllowance). */
function siteOf(url: string): string {
  return registrableDomain(new URL(url).hostname);
}
