import pino from 'pino';
import { Registry } from 'prom-client';
import { loadConfig } from '@crawler/config';
import { fetchQueue, QueueName, SCHEMA_VERSION, type FetchRequest } from '@crawler/contracts';
import { MemoryQueueTransport } from '@crawler/queue';
import { MemoryStateStore } from '@crawler/state';
import { CrawlStats } from './crawl-stats.service';
import { Pipeline } from './pipeline.service';
import { QueueDepthMetrics } from './queue-depth.metrics';

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const request = (n: number): FetchRequest => ({
  v: SCHEMA_VERSION,
  leaseId: `l${n}`,
  fetchId: `f${n}`,
  url: `http://site.test/${n}`,
  host: 'site.test',
  depth: 0,
  source: 'seed',
  hops: 0,
  ip: '93.184.216.34',
});

describe('QueueDepthMetrics', () => {
  it('sums the shards of fetch this process consumes into queue="fetch", in jobs and in messages', async () => {
    const transport = new MemoryQueueTransport();
    const registry = new Registry();
    const config = loadConfig({}, {});
    const pipeline = new Pipeline(transport, new CrawlStats(new MemoryStateStore(), registry, loadConfig({})), registry, pino({ level: 'silent' }), config);
    new QueueDepthMetrics(transport, registry, pipeline);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const taken = new Promise<void>((resolve) => (started = resolve));
    try {
      for (const shard of [fetchQueue('dl-1'), fetchQueue('dl-2')]) {
        await pipeline.consume(shard, async () => {
          started();
          await gate;
        });
      }
      for (let n = 0; n < 3; n++) await pipeline.send(fetchQueue('dl-1'), request(n));
      await pipeline.send(fetchQueue('dl-2'), request(3));
      await taken;
      const text = await registry.metrics();
      for (const gauge of ['crawler_queue_jobs', 'crawler_queue_messages']) {
        expect(sample(text, `${gauge}{queue="fetch",state="active"}`)).toBe(2);
        expect(sample(text, `${gauge}{queue="fetch",state="waiting"}`)).toBe(2);
        expect(sample(text, `${gauge}{queue="${QueueName.Parse}",state="waiting"}`)).toBe(0);
      }
      expect(text).not.toMatch(/dl-[12]/);
    } finally {
      release();
      await transport.close();
    }
  });
});
