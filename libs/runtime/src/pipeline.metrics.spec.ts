import pino from 'pino';
import { Registry } from 'prom-client';
import { loadConfig } from '@crawler/config';
import { fetchQueue, QueueName, SCHEMA_VERSION, type UrlBatch } from '@crawler/contracts';
import { MemoryQueueTransport } from '@crawler/queue';
import { MemoryStateStore } from '@crawler/state';
import { CrawlStats } from './crawl-stats.service';
import { Pipeline } from './pipeline.service';

/** The value of one sample of the exposition text, by its name and labels as written there. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** The handler has returned; the wrapper around it (timer, counters) finishes after a turn of the event loop. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

const batch = (url: string): UrlBatch => ({ v: SCHEMA_VERSION, urls: [{ url, depth: 0, source: 'seed' as const, hops: 0 }] });

describe('Pipeline metrics: queue rates', () => {
  const transports: MemoryQueueTransport[] = [];
  afterEach(async () => {
    for (const transport of transports.splice(0)) await transport.close();
  });

  function pipeline() {
    const transport = new MemoryQueueTransport({ backoffMs: 1 });
    transports.push(transport);
    const registry = new Registry();
    const state = new MemoryStateStore();
    const config = loadConfig({}, {});
    const p = new Pipeline(transport, new CrawlStats(state, registry, loadConfig({})), registry, pino({ level: 'silent' }), config);
    return { pipeline: p, registry };
  }

  it('counts jobs sent and handled per queue, completed and failed (a failed job retried counts once each time)', async () => {
    const { pipeline: p, registry } = pipeline();
    const done: string[] = [];
    let failures = 1;
    const finished = new Promise<void>((resolve) =>
      p.consume(QueueName.FilterUrls, async ({ urls: [{ url }] }) => {
        if (url.endsWith('/flaky') && failures-- > 0) throw new Error('not this time');
        done.push(url);
        if (done.length === 3) resolve();
      }),
    );
    for (const path of ['/a', '/b', '/flaky']) await p.send(QueueName.FilterUrls, batch(`http://site.test${path}`));
    await finished;
    await settled();
    const text = await registry.metrics();
    expect(sample(text, 'crawler_queue_jobs_sent_total{queue="filter-urls"}')).toBe(3);
    expect(sample(text, 'crawler_queue_jobs_handled_total{queue="filter-urls",outcome="completed"}')).toBe(3);
    expect(sample(text, 'crawler_queue_jobs_handled_total{queue="filter-urls",outcome="failed"}')).toBe(1);
    // Only completed jobs are timed.
    expect(sample(text, 'crawler_job_duration_seconds_count{queue="filter-urls"}')).toBe(3);
  });

  it('labels a downloader’s shard fetch.<id> as the queue fetch', async () => {
    const { pipeline: p, registry } = pipeline();
    const shard = fetchQueue('dl-1');
    const handled = new Promise<void>((resolve) => p.consume(shard, async () => resolve()));
    await p.send(shard, {
      v: SCHEMA_VERSION,
      leaseId: 'l1',
      fetchId: 'f1',
      url: 'http://site.test/',
      host: 'site.test',
      depth: 0,
      source: 'seed',
      hops: 0,
      ip: '93.184.216.34',
    });
    await handled;
    await settled();
    const text = await registry.metrics();
    expect(sample(text, 'crawler_queue_jobs_sent_total{queue="fetch"}')).toBe(1);
    expect(sample(text, 'crawler_queue_jobs_handled_total{queue="fetch",outcome="completed"}')).toBe(1);
    expect(sample(text, 'crawler_events_total{event="processed.fetch"}')).toBe(1);
    // Nor in an event's name: every restart of a downloader (a new id) would start new series.
    expect(text).not.toContain('dl-1');
  });
});
