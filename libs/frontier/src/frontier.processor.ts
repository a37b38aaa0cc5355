import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { QueueName } from '@crawler/contracts';
import { Pipeline } from '@crawler/runtime';
import { FrontierService } from './frontier.service';

/** Thin consumers: new URLs in, fetch outcomes in. */
@Injectable()
export class FrontierProcessor implements OnApplicationBootstrap {
  constructor(
    private readonly pipeline: Pipeline,
    private readonly frontier: FrontierService,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
  ) {}

  async onApplicationBootstrap() {
    await this.pipeline.consume(QueueName.FrontierAdd, (batch) => this.frontier.add(batch.urls, batch.batchId), { concurrency: this.config.frontier.addConcurrency });
    await this.pipeline.consume(QueueName.FrontierDone, (outcome) => this.frontier.done(outcome), { concurrency: this.config.frontier.doneConcurrency });
  }
}
