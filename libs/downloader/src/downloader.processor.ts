import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { QueueName } from '@crawler/contracts';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { Pipeline } from '@crawler/runtime';
import { DownloaderService } from './downloader.service';

/** Every turn ends with an outcome for the frontier, which releases the host. */
@Injectable()
export class DownloaderProcessor implements OnApplicationBootstrap {
  constructor(
    private readonly pipeline: Pipeline,
    private readonly downloader: DownloaderService,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
  ) {}

  async onApplicationBootstrap() {
    await this.pipeline.consume(
      QueueName.Fetch,
      async (request) => this.pipeline.send(QueueName.FrontierDone, await this.downloader.download(request)),
      { concurrency: this.config.downloader.concurrency },
    );
  }
}
