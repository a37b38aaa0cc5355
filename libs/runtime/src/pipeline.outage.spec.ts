import { Writable } from 'node:stream';
import pino from 'pino';
import { Registry } from 'prom-client';
import { loadConfig } from '@crawler/config';
import { QueueName, SCHEMA_VERSION, type UrlBatch } from '@crawler/contracts';
import { MemoryQueueTransport } from '@crawler/queue';
import { MemoryStateStore } from '@crawler/state';
import { CrawlStats } from './crawl-stats.service';
import { Pipeline } from './pipeline.service';

const batch = (url: string): UrlBatch => ({ v: SCHEMA_VERSION, urls: [{ url, depth: 0, source: 'seed' as const, hops: 0 }] });

describe('Pipeline: a consumer meeting an outage', () => {
  it('logs the outage once when it starts and once when it ends, and names the breaker it opens after it, not as unexpected', async () => {
    const lines: any[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(chunk.toString())), done()) });
    const transport = new MemoryQueueTransport({ backoffMs: 1, outageBackoffMaxMs: 5 });
    const registry = new Registry();
    const config = loadConfig({}, { 'breaker.threshold': 5, 'breaker.cooldownMs': 50 });
    const p = new Pipeline(transport, new CrawlStats(new MemoryStateStore(), registry, config), registry, pino({ base: null }, sink), config);
    // S3 refuses the first 12 tries, as the content store says it.
    let refusals = 12;
    const done = new Promise<void>((resolve) =>
      p.consume(QueueName.FilterUrls, async () => {
        if (refusals-- > 0) throw Object.assign(new Error('content store: put s3://crawl/pages/x failed (ECONNREFUSED)'), { code: 'ECONNREFUSED' });
        resolve();
      }),
    );
    await p.send(QueueName.FilterUrls, batch('http://site.test/'));
    await done;
    await new Promise((r) => setImmediate(r));
    await transport.close();
    const events = lines.map((l) => `${l.log}:${l.event}`);
    expect(events.filter((e) => e === 'infrastructure:outage-start')).toHaveLength(1);
    expect(events.filter((e) => e === 'infrastructure:outage-end')).toHaveLength(1);
    expect(events.filter((e) => e.endsWith('breaker-open')).length).toBeGreaterThan(0);
    expect(events.filter((e) => e.startsWith('unexpected:'))).toEqual([]);
    expect(lines.find((l) => l.event === 'breaker-open')).toMatchObject({ cause: 's3', msg: 's3 unavailable: pausing filter-urls for 50 ms' });
  });
});
