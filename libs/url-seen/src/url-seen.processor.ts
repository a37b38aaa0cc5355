import { createHash } from 'node:crypto';
import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { CrawlUrl, QueueName, SCHEMA_VERSION, UrlBatch } from '@crawler/contracts';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { STATE_STORE, StateStore } from '@crawler/state';
import { UrlSeenService } from './url-seen.service';

/** How long a batch's answer is remembered for a redelivery of the same message (well past any retry backoff). */
const ANSWER_MEMORY_MS = 15 * 60 * 1000;

/**
 * Admits a batch's new URLs and hands them to the frontier. Marking URLs seen is not idempotent (a redelivered
 * batch would find them all seen, and they would never reach the frontier), so the batch's answer is kept
 * under a name derived from its content: a redelivery sends the same URLs again, under the same frontier
 * batch id, which the frontier enqueues once. Only a crash between admitting and keeping the answer (one
 * round trip) can still lose a batch's URLs.
 */
@Injectable()
export class UrlSeenProcessor implements OnApplicationBootstrap {
  private readonly answers: StateStore;

  constructor(
    private readonly pipeline: Pipeline,
    private readonly seen: UrlSeenService,
    private readonly stats: CrawlStats,
    @Inject(STATE_STORE) state: StateStore,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
  ) {
    this.answers = state.namespace('url-seen-batches');
  }

  async onApplicationBootstrap() {
    await this.pipeline.consume(QueueName.SeenUrls, (batch) => this.handle(batch), { concurrency: this.config.seen.concurrency });
  }

  private async handle(batch: UrlBatch) {
    const batchId = batch.batchId ?? createHash('sha256').update(JSON.stringify(batch.urls)).digest('base64url').slice(0, 32);
    const fresh = await this.freshUrls(batch.urls, batchId);
    if (fresh.length) await this.pipeline.send(QueueName.FrontierAdd, { v: SCHEMA_VERSION, urls: fresh, batchId });
  }

  private async freshUrls(urls: CrawlUrl[], batchId: string): Promise<CrawlUrl[]> {
    const remembered = await this.answers.get(batchId);
    if (remembered !== null) return remembered === '' ? [] : remembered.split(',').map((i) => urls[Number(i)]);
    const fresh = new Set(await this.seen.admit(urls));
    const indexes = urls.flatMap((u, i) => (fresh.has(u) ? [i] : []));
    await this.answers.set(batchId, indexes.join(','), ANSWER_MEMORY_MS);
    await this.stats.count('seen.repeat', urls.length - indexes.length);
    return indexes.map((i) => urls[i]);
  }
}
