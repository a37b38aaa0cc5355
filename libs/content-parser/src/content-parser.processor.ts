import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { FetchedPage, QueueName } from '@crawler/contracts';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { CONTENT_STORE, ContentStore } from '@crawler/content-store';
import { LOGGER, Logger } from '@crawler/logging';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { ContentParserService } from './content-parser.service';

@Injectable()
export class ContentParserProcessor implements OnApplicationBootstrap {
  constructor(
    private readonly pipeline: Pipeline,
    private readonly parser: ContentParserService,
    private readonly stats: CrawlStats,
    @Inject(CONTENT_STORE) private readonly content: ContentStore,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationBootstrap() {
    await this.pipeline.consume(QueueName.Parse, (page) => this.handle(page), { concurrency: this.config.parser.concurrency });
  }

  private async handle(fetched: FetchedPage) {
    const stored = await this.content.get(fetched.bodyKey);
    if (!stored) throw new Error(`staged body ${fetched.bodyKey} is missing`);
    const result = this.parser.parse(fetched, stored.body);
    if (!result.ok) {
      this.logger.info({ event: 'parse-rejected', url: fetched.url, reason: result.reason });
      await this.stats.count(`rejected.${result.reason}`);
      await this.content.delete(fetched.bodyKey);
      return;
    }
    await this.pipeline.send(QueueName.ContentSeen, result.page);
  }
}
