import { DynamicModule, Global, Inject, Module, OnApplicationShutdown, BeforeApplicationShutdown } from '@nestjs/common';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { BODY_STAGING, BodyStaging, CONTENT_STORE, ContentStore, PAGE_STORE, PageStore } from '@crawler/content-store';
import { FRONTIER_STORE, FrontierStore } from '@crawler/frontier-store';
import { FetchLog, LOGGER, Logger } from '@crawler/logging';
import { infrastructureCause, QUEUE_TRANSPORT, QueueTransport } from '@crawler/queue';
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
import { DependencyWatch } from './dependency-watch.service';
import { HealthController } from './health.controller';
import { MetricsController } from './metrics.controller';
import { Pipeline } from './pipeline.service';
import { QueueDepthMetrics } from './queue-depth.metrics';
import { RedisMemoryGauge } from './redis-memory.service';
import { SERVICE_NAME, STAYS_READY } from './runtime.tokens';

/**
 * How often the event loop's delay is sampled for the `nodejs_eventloop_lag_*` histogram. prom-client's 10 ms
 * woke every service 100 times a second and made two fifths of an idle service's CPU (the nine: 102 CPU ms a
 * second doing nothing, 62 at 100 ms; npm run bench:idle). A stall as long as this is still caught whole; shorter ones are sampled.
 */
const EVENT_LOOP_SAMPLE_MS = 100;

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
  /** Stay ready through an outage, saying degraded (the control plane: see HealthController). @defaultValue false */
  staysReady?: boolean;
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
        { provide: STAYS_READY, useValue: options.staysReady === true },
        { provide: CRAWLER_CONFIG, useValue: config },
        { provide: LOGGER, useValue: logger },
        { provide: FetchLog, useFactory: () => new FetchLog(logger, config.fetchLogFile) },
        {
          provide: Registry,
          useFactory: () => {
            const registry = new Registry();
            registry.setDefaultLabels({ service });
            collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
            // prom-client names a few gauges like counters (nodejs_active_handles_total…); tools treat
            // `_total` as a counter (rate() of a gauge is wrong). The same numbers, by type, stay in
            // nodejs_active_handles, nodejs_active_requests and nodejs_active_resources.
            for (const metric of registry.getMetricsAsArray()) {
              if (metric instanceof Gauge && metric.name.endsWith('_total')) registry.removeSingleMetric(metric.name);
            }
            return registry;
          },
        },
        { provide: QUEUE_TRANSPORT, useFactory: () => createQueueTransport(config, redisClientErrors(logger)) },
        { provide: STATE_STORE, useFactory: () => createStateStore(config, redisClientErrors(logger)) },
        { provide: RECORDS_STORE, useFactory: (state: StateStore) => createRecordsStore(config, state), inject: [STATE_STORE] },
        { provide: CONTENT_STORE, useFactory: () => createContentStore(config) },
        {
          provide: BODY_STAGING,
          useFactory: (content: ContentStore, state: StateStore) => createBodyStaging(config, content, state),
          inject: [CONTENT_STORE, STATE_STORE],
        },
        { provide: PAGE_STORE, useFactory: (content: ContentStore) => createPageStore(config, content), inject: [CONTENT_STORE] },
        { provide: FRONTIER_STORE, useFactory: () => createFrontierStore(config, redisClientErrors(logger)) },
        CrawlStats,
        Pipeline,
        QueueDepthMetrics,
        RedisMemoryGauge,
        DependencyWatch,
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
        DependencyWatch,
      ],
    };
  }
}

/**
 * What the Redis clients emit as 'error' events (every failed reconnect attempt of every connection, many a
 * second during an outage; without a listener ioredis prints each raw on stderr). A lost or refused
 * connection is left to DependencyWatch, which logs the outage once when it starts and once when it ends;
 * anything else is logged, as one JSON line.
 */
function redisClientErrors(logger: Logger): (error: Error) => void {
  return (error) => {
    if (infrastructureCause(error)) return;
    logger.error({ event: 'redis-client-error', err: error }, 'Redis client error');
  };
}
