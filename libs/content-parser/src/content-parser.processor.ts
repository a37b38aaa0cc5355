import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { FetchedPage, QueueName, SCHEMA_VERSION } from '@crawler/contracts';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { BODY_STAGING, BodyStaging } from '@crawler/content-store';
import { parseSitemap } from '@crawler/html';
import { LOGGER, Logger } from '@crawler/logging';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { ContentParserService } from './content-parser.service';

@Injectable()
export class ContentParserProcessor implements OnApplicationBootstrap {
  constructor(
    private readonly pipeline: Pipeline,
    private readonly parser: ContentParserService,
    private readonly stats: CrawlStats,
    @Inject(BODY_STAGING) private readonly staging: BodyStaging,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationBootstrap() {
    await this.pipeline.consume(QueueName.Parse, (page) => this.handle(page), { concurrency: this.config.parser.concurrency });
  }

  private async handle(fetched: FetchedPage) {
    const stored = await this.staging.read(fetched.bodyKey);
    if (!stored) {
      // Only a finished delivery of this page deletes its staged body (content-seen, or the parser on a
      // rejection): this is a redelivery of work already done, e.g. after a lock lost while Redis was down.
      await this.stats.count('skipped.staged-body-gone');
      return;
    }
    if (fetched.kind === 'sitemap') return this.handleSitemap(fetched, stored.body);
    const result = await this.parser.parseAsync(fetched, stored.body);
    if (!result.ok) {
      this.logger.info({ event: 'parse-rejected', url: fetched.url, reason: result.reason });
      await this.stats.count(`rejected.${result.reason}`);
      await this.staging.release(fetched.bodyKey);
      return;
    }
    await this.pipeline.send(QueueName.ContentSeen, result.page);
  }

  /** A sitemap is not content: its entries go straight to the URL extractor, as one batch. */
  private async handleSitemap(fetched: FetchedPage, body: Buffer) {
    const { maxBytes, maxUrls } = this.config.sitemaps;
    const sitemap = await parseSitemap(body, { maxBytes, maxUrls });
    if (sitemap.format === 'unknown') {
      this.logger.info({ event: 'sitemap-rejected', url: fetched.url, reason: 'not a sitemap' });
      await this.stats.count('rejected.not-a-sitemap');
    } else {
      if (sitemap.truncated) this.logger.info({ event: 'sitemap-truncated', url: fetched.url, entries: sitemap.entries.length });
      await this.stats.count('sitemap.parsed');
      const tag = sitemap.format === 'sitemapindex' ? 'sitemap' : 'url';
      await this.pipeline.send(QueueName.ExtractLinks, {
        v: SCHEMA_VERSION,
        url: fetched.url,
        kind: 'sitemap',
        depth: fetched.depth,
        nofollow: false,
        links: sitemap.entries.map(({ loc, length, priority, lastmod, changefreq }) => ({
          href: loc,
          tag,
          ...(length === undefined ? {} : { length }),
          ...(priority === undefined ? {} : { priority }),
          ...(lastmod === undefined ? {} : { lastmod }),
          ...(changefreq === undefined ? {} : { changefreq }),
        })),
      });
    }
    await this.staging.release(fetched.bodyKey);
  }
}
