import { DynamicModule, Global, Inject, Module, OnApplicationShutdown, BeforeApplicationShutdown } from '@nestjs/common';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { BODY_STAGING, BodyStaging, CONTENT_STORE, ContentStore, PAGE_STORE, PageStore } from '@crawler/content-store';
import { FRONTIER_STORE, FrontierStore } from '@crawler/frontier-store';
import { FetchLog, LOGGER, Logger } from '@crawler/logging';
import { QUEUE_TRANSPORT, QueueTransport } from '@crawler/queue';
import { RECORDS_STORE, RecordsStore } from '@crawler/records';
import { STATE_STORE, StateStore } from '@crawler/state';
import { CrawlStats } from './crawl-stats.service';
import {
  createBodyStaging,
  createContentStore,
  createFrontierStore,
  createPageStore,
  createQueueTransport,
  createRecordsStore,
  createStateStore,
} from './drivers.factory';
import { HealthController } from './health.controller';
import { MetricsController } from './metrics.controller';
import { Pipeline } from './pipeline.service';
import { QueueDepthMetrics } from './queue-depth.metrics';
import { RedisMemoryGauge } from './redis-memory.service';
import { SERVICE_NAME } from './runtime.tokens';

/** Closes the transport first (workers finish what they hold), then the stores they write to. */
class InfrastructureLifecycle implements BeforeApplicationShutdown, OnApplicationShutdown {
  constructor(
    @Inject(QUEUE_TRANSPORT) private readonly queues: QueueTransport,
    @Inject(STATE_STORE) private readonly state: StateStore,
    @Inject(RECORDS_STORE) private readonly records: RecordsStore,
    @Inject(FRONTIER_STORE) private readonly frontier: FrontierStore,
    @Inject(BODY_STAGING) private readonly staging: BodyStaging,
    @Inject(PAGE_STORE) private readonly pages: PageStore,
    private readonly fetchLog: FetchLog,
    private readonly stats: CrawlStats,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async beforeApplicationShutdown(signal?: string) {
    this.logger.info({ signal }, 'draining');
    await this.queues.close();
  }

  async onApplicationShutdown() {
    await this.staging.close();
    await this.pages.close();
    await this.fetchLog.close();
    await this.stats.close().catch((err) => this.logger.warn({ event: 'stats-lost', err }, 'the last crawl counts could not be saved'));
    await this.records.close();
    await this.state.close();
    await this.frontier.close();
    this.logger.info('stopped');
    this.logger.flush();
  }
}

export interface RuntimeOptions {
  service: string;
  config: CrawlerConfig;
  /** The process's root logger (createProcessLogger): built by its bootstrap, so that there is one. */
  logger: Logger;
}

/**
 * The infrastructure every service shares, chosen by configuration: queue transport, state store, content
 * store, logger, metrics, crawl stats, the pipeline, health. Services inject the tokens, never a concrete
 * driver. What only some processes use (the crawl-state records, the plugin registry) has a module of its
 * own that those processes import.
 */
@Global()
@Module({})
export class RuntimeModule {
  static forRoot(options: RuntimeOptions): DynamicModule {
    const { config, service, logger } = options;
    return {
      module: RuntimeModule,
      controllers: [HealthController, MetricsController],
      providers: [
        { provide: SERVICE_NAME, useValue: service },
        { provide: CRAWLER_CONFIG, useValue: config },
        { provide: LOGGER, useValue: logger },
        { provide: FetchLog, useFactory: () => new FetchLog(logger, config.fetchLogFile) },
        {
          provide: Registry,
          useFactory: () => {
            const registry = new Registry();
            registry.setDefaultLabels({ service });
            collectDefaultMetrics({ register: registry });
            // prom-client names a few gauges like counters (nodejs_active_handles_total…); tools treat
            // `_total` as a counter (rate() of a gauge is wrong). The same numbers, by type, stay in
            // nodejs_active_handles, nodejs_active_requests and nodejs_active_resources.
            for (const metric of registry.getMetricsAsArray()) {
              if (metric instanceof Gauge && metric.name.endsWith('_total')) registry.removeSingleMetric(metric.name);
            }
            return registry;
          },
        },
        { provide: QUEUE_TRANSPORT, useFactory: () => createQueueTransport(config, redisErrorReporter(logger, 'queue transport')) },
        { provide: STATE_STORE, useFactory: () => createStateStore(config, redisErrorReporter(logger, 'state store')) },
        { provide: RECORDS_STORE, useFactory: (state: StateStore) => createRecordsStore(config, state), inject: [STATE_STORE] },
        { provide: CONTENT_STORE, useFactory: () => createContentStore(config) },
        {
          provide: BODY_STAGING,
          useFactory: (content: ContentStore, state: StateStore) => createBodyStaging(config, content, state),
          inject: [CONTENT_STORE, STATE_STORE],
        },
        { provide: PAGE_STORE, useFactory: (content: ContentStore) => createPageStore(config, content), inject: [CONTENT_STORE] },
        { provide: FRONTIER_STORE, useFactory: () => createFrontierStore(config) },
        CrawlStats,
        Pipeline,
        QueueDepthMetrics,
        RedisMemoryGauge,
        InfrastructureLifecycle,
      ],
      exports: [
        SERVICE_NAME,
        CRAWLER_CONFIG,
        LOGGER,
        FetchLog,
        Registry,
        QUEUE_TRANSPORT,
        STATE_STORE,
        RECORDS_STORE,
        CONTENT_STORE,
        BODY_STAGING,
        PAGE_STORE,
        FRONTIER_STORE,
        CrawlStats,
        Pipeline,
        RedisMemoryGauge,
      ],
    };
  }
}

/**
 * Logs a lost Redis connection once per outage minute, not at every reconnect attempt (the health probe
 * reports it meanwhile, and the work waits for the connection to come back).
 */
function redisErrorReporter(logger: Logger, who: string): (error: Error) => void {
  let lastAt = 0;
  return (error) => {
    if (Date.now() - lastAt < 60_000) return;
    lastAt = Date.now();
    logger.warn({ event: 'redis-connection-error', err: error }, `${who}: Redis error (a lost connection is reconnected, a refused command retried)`);
  };
}
