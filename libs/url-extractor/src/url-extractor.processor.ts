import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { QueueName, SCHEMA_VERSION } from '@crawler/contracts';
import { PluginRegistry } from '@crawler/plugin-host';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { UrlExtractorService } from './url-extractor.service';

const MAX_BATCH = 5000;

/** One page's links in, one batch of absolute URLs out (a large sitemap's, a few). */
@Injectable()
export class UrlExtractorProcessor implements OnApplicationBootstrap {
  constructor(
    private readonly pipeline: Pipeline,
    private readonly extractor: UrlExtractorService,
    private readonly stats: CrawlStats,
    private readonly plugins: PluginRegistry,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
  ) {}

  /** The recrawl policy `hubs` counts each page's new links by their referrer (HubLinks). */
  private get countsHubLinks(): boolean {
    const { recrawl, recrawlPolicy } = this.config.frontier;
    return recrawl && recrawlPolicy === 'hubs';
  }

  async onApplicationBootstrap() {
    await this.pipeline.consume(
      QueueName.ExtractLinks,
      async (page) => {
        const urls = this.extractor.extract(page, page.kind === 'sitemap' ? undefined : await this.plugins.claims(), this.countsHubLinks);
        await this.stats.count('links.extracted', urls.length);
        // A sitemap lists up to 50,000 URLs: more than one message may carry.
        for (let i = 0; i < urls.length; i += MAX_BATCH) {
          await this.pipeline.send(QueueName.FilterUrls, { v: SCHEMA_VERSION, urls: urls.slice(i, i + MAX_BATCH) });
        }
      },
      { concurrency: this.config.extractor.concurrency },
    );
  }
}
