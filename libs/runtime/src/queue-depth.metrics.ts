import { Inject, Injectable } from '@nestjs/common';
import { Gauge, Registry } from 'prom-client';
import { metricQueue, PIPELINE_QUEUES, type QueueName } from '@crawler/contracts';
import { QUEUE_TRANSPORT, QueueCounts, QueueTransport } from '@crawler/queue';
import { Pipeline } from './pipeline.service';

/**
 * Queue depths by state, read from the transport when Prometheus scrapes: every pipeline queue, plus the
 * sharded queues this process consumes. A downloader's shards `fetch.<id>` are summed into `queue="fetch"`
 * (with the base queue, empty in the distributed shape): a label carrying the id would start new series at
 * every restart. Two gauges: jobs, and messages (the depth in units of work: a BullMQ job is an envelope of
 * up to 100 messages, so only the messages are a scaling signal).
 */
@Injectable()
export class QueueDepthMetrics {
  constructor(@Inject(QUEUE_TRANSPORT) queues: QueueTransport, registry: Registry, pipeline: Pipeline) {
    const gauge = (name: string, help: string, read: (queue: QueueName) => Promise<QueueCounts>) =>
      new Gauge({
        name,
        help,
        labelNames: ['queue', 'state'],
        registers: [registry],
        async collect() {
          const totals = new Map<string, QueueCounts>();
          for (const queue of new Set([...PIPELINE_QUEUES, ...pipeline.consumed])) {
            const counts = await read(queue);
            const label = metricQueue(queue);
            const total = totals.get(label) ?? { waiting: 0, active: 0, delayed: 0, failed: 0 };
            for (const state of Object.keys(total) as (keyof QueueCounts)[]) total[state] += counts[state];
            totals.set(label, total);
          }
          this.reset();
          for (const [queue, counts] of totals) {
            for (const [state, value] of Object.entries(counts)) this.set({ queue, state }, value);
          }
        },
      });
    gauge('crawler_queue_jobs', 'Jobs in each pipeline queue, by state (a job may carry many messages)', (q) => queues.counts(q));
    gauge('crawler_queue_messages', 'Messages in each pipeline queue, by state: its depth in units of work', (q) => queues.messages(q));
  }
}
