import { Inject, Injectable } from '@nestjs/common';
import { Histogram, Registry } from 'prom-client';
import { metricQueue, type JobOf, type QueueName } from '@crawler/contracts';
import { LOGGER, Logger } from '@crawler/logging';
import { ConsumeOptions, infrastructureCause, isRedisOutOfMemory, JobOptions, QUEUE_TRANSPORT, QueueTransport } from '@crawler/queue';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { CircuitBreaker } from './circuit-breaker';
import { OutageLog } from './outage-log';
import { CrawlStats } from './crawl-stats.service';
import { ScrapedCounter } from './scraped-counter';

/**
 * What a processor sees of the transport: consume a queue, send to the next one. Every processed job is
 * counted (the completion probe watches that count) and timed. In Prometheus metrics a downloader's shard
 * `fetch.<id>` is the queue `fetch` (the process is in the scrape's own labels).
 */
@Injectable()
export class Pipeline {
  private readonly duration: Histogram<'queue'>;
  private readonly handled: ScrapedCounter<'queue' | 'outcome'>;
  private readonly sent: ScrapedCounter<'queue'>;

  constructor(
    @Inject(QUEUE_TRANSPORT) private readonly queues: QueueTransport,
    private readonly stats: CrawlStats,
    registry: Registry,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
  ) {
    this.duration = new Histogram({
      name: 'crawler_job_duration_seconds',
      help: 'Time spent handling one job, by queue',
      labelNames: ['queue'],
      buckets: [0.001, 0.005, 0.02, 0.1, 0.5, 2, 10],
      registers: [registry],
    });
    this.handled = new ScrapedCounter({
      name: 'crawler_queue_jobs_handled_total',
      help: 'Jobs handled by this process, by queue and outcome (completed; failed: the handler threw and the job is retried; outage: it threw because Redis, S3 or PostgreSQL is down, and is retried until the outage ends)',
      labelNames: ['queue', 'outcome'],
      registers: [registry],
    });
    this.sent = new ScrapedCounter({
      name: 'crawler_queue_jobs_sent_total',
      help: 'Jobs sent to each queue by this process (one whose job id is already queued counts, though it is not added again)',
      labelNames: ['queue'],
      registers: [registry],
    });
  }

  /** The queues this process consumes (a downloader's own shard among them), for the depth gauge. */
  readonly consumed = new Set<QueueName>();

  consume<Q extends QueueName>(queue: Q, handler: (payload: JobOf<Q>) => Promise<void>, options?: ConsumeOptions) {
    this.consumed.add(queue);
    const breaker = new CircuitBreaker(this.config.breaker);
    const unexpected = this.logger.child({ log: 'unexpected' });
    // An outage fails every job that meets it: said once when it starts and once when it ends, not per job.
    const outage = this.logger.child({ log: 'infrastructure' });
    const outages = new OutageLog(outage, this.config.outageLogReminderMs);
    const label = metricQueue(queue);
    const completed = this.handled.cell({ queue: label, outcome: 'completed' });
    const processed = `processed.${label}`;
    return this.queues.consume(
      queue,
      async (payload) => {
        await breaker.whenClosed();
        const end = this.duration.startTimer({ queue: label });
        try {
          await handler(payload);
        } catch (error) {
          // Anticipated failures (timeouts, refusals, HTTP errors) are outcomes, not exceptions: whatever
          // reaches here was not anticipated. The transport retries with backoff; it is never swallowed. An
          // outage of the infrastructure is retried until it ends, and said as such rather than as a bug.
          const cause = infrastructureCause(error);
          if (cause) {
            const full = isRedisOutOfMemory(error);
            outages.down(
              cause,
              { queue, cause, ...(full ? { outOfMemory: true } : {}), err: error, payload: summarize(payload) },
              full ? `Redis is full (OOM): retrying ${queue} messages until memory is freed` : `${cause} unavailable: retrying ${queue} messages until it is back`,
            );
            this.handled.cell({ queue: label, outcome: 'outage' }).n++;
            await this.stats.count(`outage-retry.${label}`);
          } else {
            unexpected.error({ event: 'job-failed', queue, err: error, payload: summarize(payload) }, 'unexpected error');
            this.handled.cell({ queue: label, outcome: 'failed' }).n++;
            await this.stats.count(`failed.${label}`);
          }
          if (breaker.failure()) {
            // A burst of outage failures pauses the consumer too, and is named as the outage it is.
            if (cause)
              outage.warn(
                { event: 'breaker-open', queue, cause, cooldownMs: this.config.breaker.cooldownMs },
                `${cause} unavailable: pausing ${queue} for ${this.config.breaker.cooldownMs} ms`,
              );
            else unexpected.error({ event: 'breaker-open', queue, cooldownMs: this.config.breaker.cooldownMs }, 'too many unexpected errors: pausing');
            await this.stats.count(`breaker-open.${label}`);
          }
          throw error;
        }
        end();
        completed.n++;
        outages.allUp({ queue }, (cause) => `${cause} is back: ${queue} messages go through again`);
        await this.stats.count(processed);
      },
      options,
    );
  }

  async send<Q extends QueueName>(queue: Q, payload: JobOf<Q>, options?: JobOptions): Promise<void> {
    await this.queues.add(queue, payload, options);
    this.sent.cell({ queue: metricQueue(queue) }).n++;
  }
}

/** Enough of a payload to find the job again without logging a whole page's links. */
function summarize(payload: unknown): unknown {
  const p = payload as Record<string, unknown>;
  return { url: p.url, host: p.host, fetchId: p.fetchId, urls: Array.isArray(p.urls) ? p.urls.length : undefined };
}
