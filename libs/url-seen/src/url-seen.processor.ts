import { randomUUID } from 'node:crypto';
import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { QueueName, SCHEMA_VERSION } from '@crawler/contracts';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { UrlSeenService } from './url-seen.service';

@Injectable()
export class UrlSeenProcessor implements OnApplicationBootstrap {
  constructor(
    private readonly pipeline: Pipeline,
    private readonly seen: UrlSeenService,
    private readonly stats: CrawlStats,
  ) {}

  async onApplicationBootstrap() {
    await this.pipeline.consume(
      QueueName.SeenUrls,
      async (batch) => {
        const fresh = await this.seen.admit(batch.urls);
        await this.stats.count('seen.repeat', batch.urls.length - fresh.length);
        // A named batch: if this message reaches the frontier twice, its URLs are queued once.
        if (fresh.length) await this.pipeline.send(QueueName.FrontierAdd, { v: SCHEMA_VERSION, urls: fresh, batchId: randomUUID() });
      },
      { concurrency: 8 },
    );
  }
}
