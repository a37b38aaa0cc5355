import { Module } from '@nestjs/common';
import { CrawlStateModule } from '@crawler/crawl-state';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { LOGGER, Logger } from '@crawler/logging';
import { loadPrioritizers } from '@crawler/plugin-sdk';
import { STATE_STORE, StateStore } from '@crawler/state';
import { DispatchLateness } from './dispatch-lateness.metric';
import { DispatchSignal } from './dispatch-signal';
import { FrontierDispatcher } from './frontier-dispatcher.service';
import { FrontierMetrics } from './frontier.metrics';
import { FrontierProcessor } from './frontier.processor';
import { FrontierService } from './frontier.service';
import { PolitenessFloorPublisher } from './politeness-floor.publisher';
import { DefaultPrioritizer, FRONTIER_PRIORITIZER, PrioritizerChain } from './prioritizer';

@Module({
  imports: [CrawlStateModule],
  providers: [
    {
      provide: FRONTIER_PRIORITIZER,
      inject: [CRAWLER_CONFIG, STATE_STORE, LOGGER],
      // The enabled plugins' prioritizers, found by name (the frontier imports no plugin), after its own.
      useFactory: (crawler: CrawlerConfig, state: StateStore, logger: Logger) =>
        new PrioritizerChain([new DefaultPrioritizer(), ...loadPrioritizers(crawler.plugins.enabled, { crawler, state, logger })]),
    },
    DispatchSignal,
    DispatchLateness,
    FrontierService,
    FrontierDispatcher,
    FrontierProcessor,
    FrontierMetrics,
    PolitenessFloorPublisher,
  ],
  exports: [FrontierService],
})
export class FrontierModule {}
