import { Inject, Injectable } from '@nestjs/common';
import { Gauge, Registry } from 'prom-client';
import { PIPELINE_QUEUES } from '@crawler/contracts';
import { QUEUE_TRANSPORT, QueueTransport } from '@crawler/queue';
import { Pipeline } from './pipeline.service';

/**
 * Queue depths by state, read from the transport when Prometheus scrapes: every pipeline queue, plus the
 * sharded queues this process consumes (a downloader reports its own `fetch.<id>`, which no other process
 * knows of; the base `fetch` queue itself stays empty in the distributed shape).
 */
@Injectable()
export class QueueDepthMetrics {
  constructor(@Inject(QUEUE_TRANSPORT) queues: QueueTransport, registry: Registry, pipeline: Pipeline) {
    new Gauge({
      name: 'crawler_queue_jobs',
      help: 'Jobs in each pipeline queue, by state',
      labelNames: ['queue', 'state'],
      registers: [registry],
      async collect() {
        for (const queue of new Set([...PIPELINE_QUEUES, ...pipeline.consumed])) {
          const counts = await queues.counts(queue);
          for (const [state, value] of Object.entries(counts)) this.set({ queue, state }, value);
        }
      },
    });
  }
}
