import { Inject, Injectable } from '@nestjs/common';
import { CrawlUrl, FetchOutcome, QueueName, SCHEMA_VERSION } from '@crawler/contracts';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { LOGGER, Logger } from '@crawler/logging';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { STATE_STORE, StateStore } from '@crawler/state';
import { urlFingerprint } from '@crawler/url';
import { politeDelay } from './politeness';

/**
 * The URL frontier, first form: one FIFO queue per host in the state store and one dispatch token per
 * active host. A host's token is a job on the dispatch queue: handling it sends the host's next URL to the
 * resolver; the fetch's outcome puts the token back, delayed by the politeness delay. One token per host
 * means at most one request in flight per host, across every process.
 */
@Injectable()
export class FrontierService {
  private readonly store: StateStore;

  constructor(
    @Inject(STATE_STORE) state: StateStore,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly pipeline: Pipeline,
    private readonly stats: CrawlStats,
  ) {
    this.store = state.namespace('frontier');
  }

  /** Queues URLs by host; a host that was idle gets its first token now. */
  async add(urls: CrawlUrl[]): Promise<void> {
    const byHost = new Map<string, string[]>();
    for (const entry of urls) {
      const host = new URL(entry.url).host;
      byHost.set(host, [...(byHost.get(host) ?? []), encodeEntry(entry)]);
    }
    await Promise.all(
      [...byHost].map(async ([host, items]) => {
        if (await this.store.queuePush(hostQueue(host), items)) await this.schedule(host, 0);
      }),
    );
    await this.stats.count('frontier.queued', urls.length);
  }

  /** The host's turn: its next URL goes to the resolver, or the host goes idle when it has none. */
  async dispatch(host: string): Promise<void> {
    const head = await this.store.queueHeadOrIdle(hostQueue(host));
    if (head === null) return;
    const { maxPages } = this.config.frontier;
    if (maxPages > 0 && (await this.store.incr('dispatched')) > maxPages) {
      // The page budget is spent: the host keeps its URLs and its token is not renewed.
      await this.stats.count('frontier.over-budget');
      return;
    }
    const entry = decodeEntry(head);
    await this.pipeline.send(QueueName.DnsResolve, {
      ...entry,
      v: SCHEMA_VERSION,
      fetchId: urlFingerprint(entry.url),
      host,
    });
    await this.store.queueRemoveHead(hostQueue(host), head);
  }

  /** A fetch finished: the host rests for its politeness delay, then gets its next turn. */
  async done(outcome: FetchOutcome): Promise<void> {
    const { delayMs, cause } = politeDelay(outcome, this.config.frontier);
    if (outcome.retry) {
      // Only robots.txt was fetched this turn: the page goes back to the head of its host's queue.
      await this.store.queuePush(hostQueue(outcome.host), [encodeEntry(outcome.retry)], true);
      if (this.config.frontier.maxPages > 0) await this.store.incr('dispatched', -1);
    }
    await this.store.hashSet(
      'politeness',
      outcome.host,
      JSON.stringify({ at: Date.now(), delayMs, cause, kind: outcome.kind, status: outcome.status }),
    );
    this.logger.debug({ event: 'politeness', host: outcome.host, delayMs, cause }, 'host rests');
    await this.schedule(outcome.host, delayMs);
  }

  private schedule(host: string, delayMs: number): Promise<void> {
    return this.pipeline.send(QueueName.FrontierDispatch, { v: SCHEMA_VERSION, host }, { delayMs });
  }
}

const hostQueue = (host: string) => `host:${host}`;

/**
 * One spelling per entry: a robots-only turn can push its URL back before the dispatcher has removed it
 * from the head, and `queueRemoveHead` must then recognise the pushed-back copy as the same item.
 */
function encodeEntry(entry: CrawlUrl): string {
  return JSON.stringify([entry.url, entry.depth, entry.source, entry.hops]);
}

function decodeEntry(item: string): CrawlUrl {
  const [url, depth, source, hops] = JSON.parse(item);
  return CrawlUrl.parse({ url, depth, source, hops });
}
