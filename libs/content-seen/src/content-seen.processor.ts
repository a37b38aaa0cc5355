import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { ParsedPage, PluginPage, pluginQueue, QueueName, SCHEMA_VERSION } from '@crawler/contracts';
import { BODY_STAGING, BodyStaging } from '@crawler/content-store';
import { PluginRegistry } from '@crawler/plugin-host';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { ContentSeenService } from './content-seen.service';
import { linksOfCopy } from './copy-links';
import { WarcArchive } from './warc-archive.service';

/**
 * New pages are stored and mined for links; duplicates are not stored, and only an exact copy's links that
 * lead elsewhere than its original's go on (see linksOfCopy). The staged body is released either way.
 * Each enabled plugin with a page hook gets every new page, as a compact PluginPage on `plugin.<name>`.
 */
@Injectable()
export class ContentSeenProcessor implements OnApplicationBootstrap {
  constructor(
    private readonly pipeline: Pipeline,
    private readonly seen: ContentSeenService,
    private readonly warc: WarcArchive,
    @Inject(BODY_STAGING) private readonly staging: BodyStaging,
    private readonly plugins: PluginRegistry,
    private readonly stats: CrawlStats,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
  ) {}

  async onApplicationBootstrap() {
    await this.pipeline.consume(QueueName.ContentSeen, (page) => this.handle(page), { concurrency: this.config.contentSeen.concurrency });
  }

  private async handle(page: ParsedPage) {
    const staged = await this.staging.read(page.bodyKey);
    if (!staged) {
      // Deleted only by a finished delivery of this page (below): this is a redelivery of work already done.
      await this.stats.count('skipped.staged-body-gone');
      return;
    }
    const decision = await this.seen.decide(page);
    await this.warc.record(page, staged, decision);
    if (!decision.duplicate) {
      // Its links go out while the page waits for its segment to be written: a redelivery after a crash
      // stores it and sends them again, which the stages after tolerate (docs/reliability.md).
      await Promise.all([this.seen.storePage(page, staged).then((contentKey) => this.pageHooks(page, contentKey)), this.sendLinks(page)]);
    } else if (decision.kind === 'exact') {
      // Not stored again, but a copy served at another place links to other places: those links go on.
      const links = linksOfCopy(page, decision.originalUrl);
      if (links.length > 0) {
        await this.stats.count('duplicate.links-followed');
        await this.sendLinks({ ...page, links });
      }
    }
    await this.staging.release(page.bodyKey);
  }

  private async sendLinks(page: Pick<ParsedPage, 'url' | 'depth' | 'baseHref' | 'nofollow' | 'links'>) {
    if (page.nofollow || page.links.length === 0) return;
    await this.pipeline.send(QueueName.ExtractLinks, {
      v: SCHEMA_VERSION,
      url: page.url,
      depth: page.depth,
      baseHref: page.baseHref,
      nofollow: page.nofollow,
      links: page.links,
    });
  }

  private async pageHooks(page: ParsedPage, contentKey: string) {
    const { pageHooks } = await this.plugins.claims();
    if (pageHooks.length === 0) return;
    const hook: PluginPage = {
      v: SCHEMA_VERSION,
      hook: 'page',
      url: page.url,
      depth: page.depth,
      status: page.status,
      fetchedAt: page.fetchedAt,
      contentType: page.contentType,
      charset: page.charset,
      ...(page.title === undefined ? {} : { title: page.title }),
      ...(page.lang === undefined ? {} : { lang: page.lang }),
      noindex: page.noindex,
      contentHash: page.contentHash,
      simhash: page.simhash,
      contentKey,
      ...(page.referrer === undefined ? {} : { referrer: page.referrer }),
    };
    // One job per fetch and content: a redelivered content-seen job does not run the hooks twice.
    const jobId = `page-${page.fetchId}-${page.contentHash.slice(0, 16)}`;
    for (const plugin of pageHooks) await this.pipeline.send(pluginQueue(plugin.name), hook, { jobId });
  }
}
