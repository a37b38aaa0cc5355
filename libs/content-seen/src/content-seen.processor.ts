import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { ParsedPage, QueueName, SCHEMA_VERSION } from '@crawler/contracts';
import { CONTENT_STORE, ContentStore } from '@crawler/content-store';
import { Pipeline } from '@crawler/runtime';
import { ContentSeenService } from './content-seen.service';
import { WarcArchive } from './warc-archive.service';

/** New pages are stored and mined for links; duplicates stop here. The staged body is released either way. */
@Injectable()
export class ContentSeenProcessor implements OnApplicationBootstrap {
  constructor(
    private readonly pipeline: Pipeline,
    private readonly seen: ContentSeenService,
    private readonly warc: WarcArchive,
    @Inject(CONTENT_STORE) private readonly content: ContentStore,
  ) {}

  async onApplicationBootstrap() {
    await this.pipeline.consume(QueueName.ContentSeen, (page) => this.handle(page), { concurrency: 8 });
  }

  private async handle(page: ParsedPage) {
    const staged = await this.content.get(page.bodyKey);
    if (!staged) throw new Error(`staged body ${page.bodyKey} is missing`);
    const verdict = await this.seen.check(page, staged.body);
    await this.warc.record(page, staged.body, verdict);
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
}
