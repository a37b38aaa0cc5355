import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { FetchedPage } from '@crawler/contracts';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { productToken } from '@crawler/robots';
import { ParsePageOptions, parsePage, ParseResult } from './parse-page';
import { ParseThreads } from './parse-threads';

export type { ParseResult } from './parse-page';

/**
 * The content parser's work (parsePage), in this thread or, with PARSER_THREADS, in worker threads beside
 * the event loop.
 */
@Injectable()
export class ContentParserService implements OnApplicationShutdown {
  private readonly options: ParsePageOptions;
  private readonly threads?: ParseThreads;

  constructor(@Inject(CRAWLER_CONFIG) config: CrawlerConfig) {
    this.options = {
      maxLinks: config.parser.maxLinks,
      // `<img src>` links are collected only while a plugin is enabled (the extractor follows those a plugin claims).
      images: (config.plugins?.enabled.length ?? 0) > 0,
      botName: productToken(config.downloader.userAgent),
    };
    if (config.parser.threads > 0) this.threads = new ParseThreads(config.parser.threads, this.options);
  }

  /** Parses in this thread. */
  parse(fetched: FetchedPage, body: Buffer): ParseResult {
    return parsePage(fetched, body, this.options);
  }

  /** Parses on a worker thread when there are any, else in this thread. */
  parseAsync(fetched: FetchedPage, body: Buffer): Promise<ParseResult> {
    return this.threads ? this.threads.parse(fetched, body) : Promise.resolve(this.parse(fetched, body));
  }

  onApplicationShutdown() {
    return this.threads?.close();
  }
}
