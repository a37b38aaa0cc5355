import { mkdtempSync, rmSync } from 'node:fs';
import http, { IncomingMessage, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadConfig } from '@crawler/config';
import { FetchOutcome, fetchQueue, QueueName, SCHEMA_VERSION } from '@crawler/contracts';
import { Pipeline, RuntimeModule } from '@crawler/runtime';
import { createLogger } from '@crawler/logging';
import { statusClass } from './downloader.metrics';
import { DownloaderModule } from './downloader.module';
import { DownloaderProcessor } from './downloader.processor';

const PAGE = '<html><head><title>Home</title></head><body><a href="/a">a</a></body></html>';
const ZIPPED = gzipSync(Buffer.from(PAGE.repeat(20)));

const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
  '/robots.txt': (req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow: /private\n'),
  '/': (req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE),
  '/zipped': (req, res) => res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' }).end(ZIPPED),
  '/missing': (req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>not here</h1>'),
  '/boom': (req) => req.socket.destroy(),
};

/** One sample's value: the series named `name` whose labels include `labels` (the service label is added to all). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[3]);
  }
  return undefined;
}

/**
 * The downloader as it runs in its own process (the runtime with memory drivers, its module, HTTP), against
 * a fixture site on 127.0.0.1: fetch requests go in through its shard of the fetch queue, outcomes come out
 * on frontier-done, and /metrics is read over HTTP.
 */
describe('downloader /metrics after a few fetches', () => {
  let app: INestApplication;
  let base: string;
  let site: http.Server;
  let text: string;
  let id: string;
  const outcomes: FetchOutcome[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'downloader-metrics-'));

  beforeAll(async () => {
    site = http.createServer((req, res) => (routes[req.url!] ?? ((_, r: ServerResponse) => r.writeHead(404).end()))(req, res));
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    const sitePort = (site.address() as AddressInfo).port;
    // A port where nothing listens: its robots.txt is unreachable.
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    const config = loadConfig(
      {},
      { dataDir: dir, logLevel: 'silent', port: 0, 'sitemaps.mode': 'off', 'downloader.userAgent': 'test-bot/1.0 (+http://127.0.0.1/about)' },
    );
    const logger = createLogger({ level: config.logLevel, service: 'downloader' });
    @Module({ imports: [RuntimeModule.forRoot({ service: 'downloader', config, logger }), DownloaderModule] })
    class DownloaderAppModule {}
    app = await NestFactory.create(DownloaderAppModule, { logger: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${app.getHttpServer().address().port}`;

    const pipeline = app.get(Pipeline);
    id = app.get(DownloaderProcessor).id;
    const shard = fetchQueue(id);
    let next: ((outcome: FetchOutcome) => void) | undefined;
    await pipeline.consume(QueueName.FrontierDone, async (outcome) => {
      outcomes.push(outcome);
      next?.(outcome);
    });
    let n = 0;
    const fetchOne = async (port: number, path: string) => {
      const host = `made-up.test:${port}`;
      const done = new Promise<FetchOutcome>((resolve) => (next = resolve));
      n++;
      await pipeline.send(shard, {
        v: SCHEMA_VERSION,
        leaseId: `l${n}`,
        fetchId: `f${n}`,
        url: `http://${host}${path}`,
        host,
        depth: 1,
        source: 'link',
        hops: 0,
        ip: '127.0.0.1',
      });
      return done;
    };
    for (const path of ['/', '/', '/zipped', '/private', '/missing', '/boom']) await fetchOne(sitePort, path);
    for (const path of ['/', '/']) await fetchOne(closedPort, path);
    // The consumer's counters are written once its handler has returned.
    await new Promise((resolve) => setImmediate(resolve));
    text = await (await fetch(`${base}/metrics`)).text();
  });

  afterAll(async () => {
    await app?.close();
    await new Promise<void>((resolve) => (site.closeAllConnections(), site.close(() => resolve())));
    rmSync(dir, { recursive: true, force: true });
  });

  it('went through the turns the test expects', () => {
    expect(outcomes.map((o) => [o.kind, o.status])).toEqual([
      ['robots-fetched', 200],
      ['fetched', 200],
      ['fetched', 200],
      ['disallowed', undefined],
      ['fetched', 404],
      ['error', undefined],
      ['deferred', undefined],
      ['deferred', undefined],
    ]);
  });

  it('exports every metric family of a downloader', () => {
    for (const family of [
      'crawler_fetches_total',
      'crawler_fetch_duration_seconds',
      'crawler_fetch_bytes_total',
      'crawler_robots_decisions_total',
      'crawler_events_total',
      'crawler_queue_jobs',
      'crawler_queue_messages',
      'crawler_queue_jobs_handled_total',
      'crawler_queue_jobs_sent_total',
      'crawler_job_duration_seconds',
      'process_cpu_seconds_total',
    ]) {
      expect(text).toContain(`# TYPE ${family} `);
    }
  });

  it('counts requests by resource and status class, a failure without a response as error', () => {
    expect(sample(text, 'crawler_fetches_total', { resource: 'robots', status_class: '2xx' })).toBe(1);
    expect(sample(text, 'crawler_fetches_total', { resource: 'robots', status_class: 'error' })).toBe(1);
    expect(sample(text, 'crawler_fetches_total', { resource: 'page', status_class: '2xx' })).toBe(2);
    expect(sample(text, 'crawler_fetches_total', { resource: 'page', status_class: '4xx' })).toBe(1);
    expect(sample(text, 'crawler_fetches_total', { resource: 'page', status_class: 'error' })).toBe(1);
    expect(sample(text, 'crawler_fetches_total', { service: 'downloader', resource: 'page', status_class: '2xx' })).toBe(2);
    // The crawl-wide counter still says it its own way.
    expect(sample(text, 'crawler_events_total', { event: 'error.fetch.reset' })).toBe(1);
  });

  it('times requests in a histogram by resource and outcome', () => {
    expect(sample(text, 'crawler_fetch_duration_seconds_count', { resource: 'page', outcome: 'response' })).toBe(3);
    expect(sample(text, 'crawler_fetch_duration_seconds_count', { resource: 'page', outcome: 'error' })).toBe(1);
    expect(sample(text, 'crawler_fetch_duration_seconds_count', { resource: 'robots', outcome: 'response' })).toBe(1);
    expect(sample(text, 'crawler_fetch_duration_seconds_bucket', { resource: 'page', outcome: 'response', le: '+Inf' })).toBe(3);
    expect(sample(text, 'crawler_fetch_duration_seconds_sum', { resource: 'page', outcome: 'response' })).toBeGreaterThan(0);
  });

  it('counts the body bytes read off the wire: a compressed body by its encoded size', () => {
    // The 404's body was not wanted, so not read.
    expect(sample(text, 'crawler_fetch_bytes_total', { resource: 'page' })).toBe(Buffer.byteLength(PAGE) + ZIPPED.length);
  });

  it('counts one robots decision per turn', () => {
    const decision = (d: string) => sample(text, 'crawler_robots_decisions_total', { decision: d });
    expect([decision('fetched'), decision('allowed'), decision('disallowed'), decision('deferred')]).toEqual([1, 4, 1, 2]);
  });

  it('counts the jobs of its shard as the queue fetch, and what it sent on', () => {
    expect(sample(text, 'crawler_queue_jobs_handled_total', { queue: 'fetch', outcome: 'completed' })).toBe(8);
    expect(sample(text, 'crawler_queue_jobs_sent_total', { queue: 'frontier-done' })).toBe(8);
    expect(sample(text, 'crawler_queue_jobs_sent_total', { queue: 'parse' })).toBe(2);
    expect(sample(text, 'crawler_job_duration_seconds_count', { queue: 'fetch' })).toBe(8);
  });

  it('reports its shard as the queue fetch in the depth gauges (jobs and messages): no label value holds its id', () => {
    for (const gauge of ['crawler_queue_jobs', 'crawler_queue_messages']) {
      for (const state of ['waiting', 'active', 'delayed', 'failed']) expect(sample(text, gauge, { queue: 'fetch', state })).toBe(0);
    }
    const values = [...text.matchAll(/^[a-zA-Z_:][\w:]*\{(.*)\} /gm)].flatMap((m) => [...m[1].matchAll(/\w+="([^"]*)"/g)].map((v) => v[1]));
    expect(values.length).toBeGreaterThan(0);
    expect(values.filter((value) => value.includes(id))).toEqual([]);
  });

  it('has no gauge named like a counter (…_total)', () => {
    const gauges = [...text.matchAll(/^# TYPE (\S+) gauge$/gm)].map((m) => m[1]);
    expect(gauges).toContain('crawler_queue_messages');
    expect(gauges.filter((name) => name.endsWith('_total'))).toEqual([]);
  });

  it('is live and ready', async () => {
    expect((await fetch(`${base}/health/live`)).status).toBe(200);
    const ready = await fetch(`${base}/health/ready`);
    expect([ready.status, await ready.json()]).toEqual([200, { service: 'downloader', status: 'ok', checks: { memory: 'ok', fs: 'ok' }, failing: [] }]);
  });
});

describe('statusClass', () => {
  it('names the class of a status code, and error for no response', () => {
    expect([100, 204, 304, 404, 503, null].map(statusClass)).toEqual(['1xx', '2xx', '3xx', '4xx', '5xx', 'error']);
  });
});
