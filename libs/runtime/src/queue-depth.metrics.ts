import { Inject, Injectable } from '@nestjs/common';
import { Gauge, Registry } from 'prom-client';
import { PIPELINE_QUEUES } from '@crawler/contracts';
import { QUEUE_TRANSPORT, QueueTransport } from '@crawler/queue';

/** Queue depths by state, read from the transport when Prometheus scrapes. */
@Injectable()
export class QueueDepthMetrics {
  constructor(@Inject(QUEUE_TRANSPORT) queues: QueueTransport, registry: Registry) {
    new Gauge({
      name: 'crawler_queue_jobs',
      help: 'Jobs in each pipeline queue, by state',
      labelNames: ['queue', 'state'],
      registers: [registry],
      async collect() {
        for (const queue of PIPELINE_QUEUES) {
          const counts = await queues.counts(queue);
          for (const [state, value] of Object.entries(counts)) this.set({ queue, state }, value);
        }
      },
    });
  }
}
