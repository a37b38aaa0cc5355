import { Inject, Injectable } from '@nestjs/common';
import { Histogram, Registry } from 'prom-client';
import type { JobOf, QueueName } from '@crawler/contracts';
import { LOGGER, Logger } from '@crawler/logging';
import { ConsumeOptions, JobOptions, QUEUE_TRANSPORT, QueueTransport } from '@crawler/queue';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { CircuitBreaker } from './circuit-breaker';
import { CrawlStats } from './crawl-stats.service';

/**
 * What a processor sees of the transport: consume a queue, send to the next one. Every processed job is
 * counted (the completion probe watches that count) and timed.
 */
@Injectable()
export class Pipeline {
  private readonly duration: Histogram<'queue'>;

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
  }

  consume<Q extends QueueName>(queue: Q, handler: (payload: JobOf<Q>) => Promise<void>, options?: ConsumeOptions) {
    const breaker = new CircuitBreaker(this.config.breaker);
    const unexpected = this.logger.child({ log: 'unexpected' });
    return this.queues.consume(
      queue,
      async (payload) => {
        await breaker.whenClosed();
        const end = this.duration.startTimer({ queue });
        try {
          await handler(payload);
        } catch (error) {
          // Anticipated failures (timeouts, refusals, HTTP errors) are outcomes, not exceptions: whatever
          // reaches here was not anticipated. The transport retries with backoff; it is never swallowed.
          unexpected.error({ event: 'job-failed', queue, err: error, payload: summarize(payload) }, 'unexpected error');
          await this.stats.count(`failed.${queue}`);
          if (breaker.failure()) {
            unexpected.error({ event: 'breaker-open', queue, cooldownMs: this.config.breaker.cooldownMs }, 'too many unexpected errors: pausing');
            await this.stats.count(`breaker-open.${queue}`);
          }
          throw error;
        }
        end();
        await this.stats.count(`processed.${queue}`);
      },
      options,
    );
  }

  send<Q extends QueueName>(queue: Q, payload: JobOf<Q>, options?: JobOptions): Promise<void> {
    return this.queues.add(queue, payload, options);
  }
}

/** Enough of a payload to find the job again without logging a whole page's links. */
function summarize(payload: unknown): unknown {
  const p = payload as Record<string, unknown>;
  return { url: p.url, host: p.host, fetchId: p.fetchId, urls: Array.isArray(p.urls) ? p.urls.length : undefined };
}
