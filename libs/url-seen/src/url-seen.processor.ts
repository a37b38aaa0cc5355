import { createHash } from 'node:crypto';
import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { QueueName, SCHEMA_VERSION, UrlBatch } from '@crawler/contracts';
import { HubLinks } from '@crawler/crawl-state';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { UrlSeenService } from './url-seen.service';

/**
 * Admits a batch's new URLs and hands them to the frontier, under the batch's id (or one derived from its
 * content). URL-seen keeps the batch's answer until they are sent, so a redelivery meanwhile sends the same
 * URLs, under the same id, which the frontier enqueues once. Once sent, the answer is forgotten: a later
 * redelivery finds every URL seen and sends none, and none is lost, since the frontier has them.
 */
@Injectable()
export class UrlSeenProcessor implements OnApplicationBootstrap {
  constructor(
    private readonly pipeline: Pipeline,
    private readonly seen: UrlSeenService,
    private readonly stats: CrawlStats,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
    private readonly hubLinks: HubLinks,
  ) {}

  async onApplicationBootstrap() {
    await this.pipeline.consume(QueueName.SeenUrls, (batch) => this.handle(batch), { concurrency: this.config.seen.concurrency });
  }

  private async handle(batch: UrlBatch) {
    const batchId = batch.batchId ?? createHash('sha256').update(JSON.stringify(batch.urls)).digest('base64url').slice(0, 32);
    const { fresh, answerLost } = await this.seen.admitBatch(batch.urls, batchId);
    if (answerLost) await this.stats.count('seen.answer-lost', fresh.length);
    else await this.stats.count('seen.repeat', batch.urls.length - fresh.length);
    // Before the send: once sent the answer is forgotten, so a redelivery after a failure here counts again
    // (a hub's count over by a batch; only whether it grew steers the policy).
    if (this.config.frontier.recrawl && this.config.frontier.recrawlPolicy === 'hubs') {
      const refused = await this.hubLinks.record(fresh);
      if (refused) await this.stats.count('seen.hub-pages-refused', refused);
    }
    if (fresh.length) await this.pipeline.send(QueueName.FrontierAdd, { v: SCHEMA_VERSION, urls: fresh, batchId });
    await this.seen.forgetBatch(batchId);
  }
}
