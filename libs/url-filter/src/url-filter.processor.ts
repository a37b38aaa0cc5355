import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { QueueName, SCHEMA_VERSION } from '@crawler/contracts';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { UrlFilterService } from './url-filter.service';

@Injectable()
export class UrlFilterProcessor implements OnApplicationBootstrap {
  constructor(
    private readonly pipeline: Pipeline,
    private readonly filter: UrlFilterService,
    private readonly stats: CrawlStats,
  ) {}

  async onApplicationBootstrap() {
    await this.pipeline.consume(
      QueueName.FilterUrls,
      async (batch) => {
        const { accepted, rejected } = await this.filter.filter(batch.urls);
        await Promise.all(Object.entries(rejected).map(([reason, n]) => this.stats.count(`filtered.${reason}`, n)));
        if (accepted.length) await this.pipeline.send(QueueName.SeenUrls, { v: SCHEMA_VERSION, urls: accepted });
      },
      { concurrency: 8 },
    );
  }
}
