import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { ParsedPage, PluginPage, pluginQueue, QueueName, SCHEMA_VERSION } from '@crawler/contracts';
import { CONTENT_STORE, ContentStore } from '@crawler/content-store';
import { CrawlStats, Pipeline, PluginRegistry } from '@crawler/runtime';
import { ContentSeenService } from './content-seen.service';
import { WarcArchive } from './warc-archive.service';

/**
 * New pages are stored and mined for links; duplicates stop here. The staged body is released either way.
 * Each enabled plugin with a page hook gets every new page, as a compact PluginPage on `plugin.<name>`.
 */
@Injectable()
export class ContentSeenProcessor implements OnApplicationBootstrap {
  constructor(
    private readonly pipeline: Pipeline,
    private readonly seen: ContentSeenService,
    private readonly warc: WarcArchive,
    @Inject(CONTENT_STORE) private readonly content: ContentStore,
    private readonly plugins: PluginRegistry,
    private readonly stats: CrawlStats,
  ) {}

  async onApplicationBootstrap() {
    await this.pipeline.consume(QueueName.ContentSeen, (page) => this.handle(page), { concurrency: 8 });
  }

  private async handle(page: ParsedPage) {
    const staged = await this.content.get(page.bodyKey);
    if (!staged) {
      // Deleted only by a finished delivery of this page (below): this is a redelivery of work already done.
      await this.stats.count('skipped.staged-body-gone');
      return;
    }
    const verdict = await this.seen.check(page, staged.body);
    await this.warc.record(page, staged.body, verdict);
    if (!verdict.duplicate) await this.pageHooks(page, verdict.contentKey);
    if (!verdict.duplicate && !page.nofollow && page.links.length > 0) {
      await this.pipeline.send(QueueName.ExtractLinks, {
        v: SCHEMA_VERSION,
        url: page.url,
        depth: page.depth,
        baseHref: page.baseHref,
        nofollow: page.nofollow,
        links: page.links,
      });
    }
    await this.content.delete(page.bodyKey);
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
    };
    // One job per fetch and content: a redelivered content-seen job does not run the hooks twice.
    const jobId = `page-${page.fetchId}-${page.contentHash.slice(0, 16)}`;
    for (const plugin of pageHooks) await this.pipeline.send(pluginQueue(plugin.name), hook, { jobId });
  }
}
