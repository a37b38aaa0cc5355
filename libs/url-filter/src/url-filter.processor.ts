import { randomBytes } from 'node:crypto';
import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { QueueName, SCHEMA_VERSION } from '@crawler/contracts';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { UrlFilterService } from './url-filter.service';

/**
 * Links in, canonical admitted URLs out to URL-seen. Every rejection is counted by its reason as
 * `filtered.<reason>` (crawl totals, and the Prometheus counter `crawler_events_total{event=…}`).
 */
@Injectable()
export class UrlFilterProcessor implements OnApplicationBootstrap {
  /** Batch ids: this process's random prefix, then a count (a random id a batch cost a system call each). */
  private readonly batchIdPrefix = randomBytes(12).toString('base64url');
  private batchCount = 0;

  constructor(
    private readonly pipeline: Pipeline,
    private readonly filter: UrlFilterService,
    private readonly stats: CrawlStats,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
  ) {}

  async onApplicationBootstrap() {
    await this.pipeline.consume(
      QueueName.FilterUrls,
      async (batch) => {
        const result = await this.filter.filter(batch.urls);
        await Promise.all(Object.entries(result.rejected).map(([reason, n]) => this.stats.count(`filtered.${reason}`, n)));
        await this.stats.count('repeat.filter', result.repeats);
        // Each batch its own id: URL-seen keeps its answer under it, and two batches of the same URLs (two
        // redirects to one page) must not be taken for one delivered twice.
        const batchId = `${this.batchIdPrefix}-${(this.batchCount++).toString(36)}`;
        if (result.accepted.length) await this.pipeline.send(QueueName.SeenUrls, { v: SCHEMA_VERSION, urls: result.accepted, batchId });
        this.filter.passedOn(result);
      },
      { concurrency: this.config.filter.concurrency },
    );
  }
}
