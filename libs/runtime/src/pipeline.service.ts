import { Inject, Injectable } from '@nestjs/common';
import { Histogram, Registry } from 'prom-client';
import type { JobOf, QueueName } from '@crawler/contracts';
import { LOGGER, Logger } from '@crawler/logging';
import { ConsumeOptions, JobOptions, QUEUE_TRANSPORT, QueueTransport } from '@crawler/queue';
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
    return this.queues.consume(
      queue,
      async (payload) => {
        const end = this.duration.startTimer({ queue });
        try {
          await handler(payload);
        } catch (error) {
          // The transport retries with backoff; the failure is still recorded, never swallowed.
          this.logger.error({ event: 'job-failed', queue, err: error, payload: summarize(payload) }, 'job failed');
          await this.stats.count(`failed.${queue}`);
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
