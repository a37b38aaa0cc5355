import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { QueueName, SCHEMA_VERSION } from '@crawler/contracts';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { UrlExtractorService } from './url-extractor.service';

/** One page's links in, one batch of absolute URLs out. */
@Injectable()
export class UrlExtractorProcessor implements OnApplicationBootstrap {
  constructor(
    private readonly pipeline: Pipeline,
    private readonly extractor: UrlExtractorService,
    private readonly stats: CrawlStats,
  ) {}

  async onApplicationBootstrap() {
    await this.pipeline.consume(
      QueueName.ExtractLinks,
      async (page) => {
        const urls = this.extractor.extract(page);
        await this.stats.count('links.extracted', urls.length);
        if (urls.length) await this.pipeline.send(QueueName.FilterUrls, { v: SCHEMA_VERSION, urls });
      },
      { concurrency: 8 },
    );
  }
}
