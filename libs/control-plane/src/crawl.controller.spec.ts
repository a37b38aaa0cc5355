import { gzipSync } from 'node:zlib';
import { INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as iconv from 'iconv-lite';
import { loadConfig } from '@crawler/config';
import { FetchOutcome, QueueName } from '@crawler/contracts';
import { PAGE_STORE, PageStore } from '@crawler/content-store';
import { MemoryFrontierStore } from '@crawler/frontier-store';
import { createLogger, type Logger } from '@crawler/logging';
import { MemoryQueueTransport, QUEUE_TRANSPORT, QueueTransport } from '@crawler/queue';
import { Registry } from 'prom-client';
import { RECORDS_STORE, RecordsStore, RecordsUnavailableError } from '@crawler/records';
import { CrawlActivity, FailedUrls } from '@crawler/crawl-state';
import { CrawlStats, RuntimeModule } from '@crawler/runtime';
import { MemoryStateStore } from '@crawler/state';
import { ControlPlaneModule } from './control-plane.module';
import { CrawlMonitor, DEFAULT_MONITOR_OPTIONS } from './crawl-monitor.service';

describe('control plane: seeds, pause/resume, status, history, URL lookup, dashboard over HTTP', () => {
  let app: INestApplication;
  let base: string;
  let pages: PageStore;
  let stats: CrawlStats;
  let activity: CrawlActivity;
  let monitor: CrawlMonitor;
  let queues: QueueTransport;
  const dir = mkdtempSync(join(tmpdir(), 'cp-api-'));

  beforeAll(async () => {
    const config = loadConfig({}, { dataDir: dir, logLevel: 'silent', port: 0 });
    const logger = createLogger({ level: config.logLevel, service: 'control-plane' });
    @Module({
      imports: [RuntimeModule.forRoot({ service: 'control-plane', config, logger }), ControlPlaneModule],
    })
    class TestModule {}
    app = await NestFactory.create(TestModule, { logger: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${app.getHttpServer().address().port}`;
    pages = app.get(PAGE_STORE);
    stats = app.get(CrawlStats);
    activity = app.get(CrawlActivity);
    monitor = app.get(CrawlMonitor);
    queues = app.get(QUEUE_TRANSPORT);
  });

  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }> => {
    const response = await fetch(base + path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: the text itself
    }
    return { status: response.status, body: parsed, headers: response.headers };
  };

  it('lists the URLs given up on, newest first, by reason, and refuses a bad query with a 400 naming it', async () => {
    const failed = app.get(FailedUrls);
    expect((await call('GET', '/failed-urls')).body).toEqual({ total: 0, kept: 1000, urls: [] });
    await failed.record({ at: '2026-01-01T00:00:00.000Z', url: 'http://a.test/1', host: 'a.test', reason: 'status-500', attempts: 3, status: 500 });
    await failed.record({ at: '2026-01-01T00:00:01.000Z', url: 'http://a.test/2', host: 'a.test', reason: 'reset', attempts: 3, error: 'ECONNRESET: read ECONNRESET' });
    const all = await call('GET', '/failed-urls');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({
      total: 2,
      urls: [
        { seq: 2, url: 'http://a.test/2', reason: 'reset', attempts: 3 },
        { seq: 1, url: 'http://a.test/1', status: 500 },
      ],
    });
    expect((await call('GET', '/failed-urls?reason=status-500')).body.urls.map((u: { url: string }) => u.url)).toEqual(['http://a.test/1']);
    expect((await call('GET', '/failed-urls?limit=1')).body.urls).toHaveLength(1);
    const bad = await call('GET', '/failed-urls?limit=0');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^limit: /);
    expect((await call('GET', '/failed-urls?reason=DROP%20TABLE')).status).toBe(400);
    expect((await call('GET', '/failed-urls?limits=3')).status).toBe(400);
  });

  it('accepts seeds (bare domains become https home pages) and refuses bad ones, naming them', async () => {
    const ok = await call('POST', '/seeds', { urls: ['http://a.test/', 'b.test'] });
    expect(ok.status).toBe(201);
    expect(ok.body).toEqual({ accepted: ['http://a.test/', 'https://b.test/'] });
    expect((await queues.counts(QueueName.FilterUrls)).waiting).toBe(1);
    const bad = await call('POST', '/seeds', { urls: ['ftp://a.test/'] });
    expect(bad.status).toBe(400);
    expect(bad.body.problems).toEqual([{ input: 'ftp://a.test/', reason: expect.stringMatching(/ftp/) }]);
    expect((await call('POST', '/seeds', { seeds: [] })).status).toBe(400);
  });

  it('refuses a seed on a refused port with a 400 naming the port, and sends none of the batch', async () => {
    const before = await stats.totals();
    const bad = await call('POST', '/seeds', { urls: ['http://ok.test/', 'http://redis.test:6379/', 'smtp.test:25'] });
    expect(bad.status).toBe(400);
    expect(bad.body.problems).toEqual([
      { input: 'http://redis.test:6379/', reason: expect.stringMatching(/^port 6379 is in URL_FILTER_BLOCKED_PORTS/) },
      { input: 'smtp.test:25', reason: 'port 25 is one the Fetch standard never lets HTTP reach' },
    ]);
    expect((await stats.totals()).seeds).toBe(before.seeds);
  });

  it("refuses seeds at addresses the crawl may not reach (400, in the resolver's words, none sent), and names the scheme of javascript: and data:", async () => {
    const before = await stats.totals();
    const seeds = [
      'http://169.254.169.254/latest/meta-data/',
      'http://[::ffff:127.0.0.1]/',
      'http://0x7f.1/',
      '10.0.0.1',
      'localhost',
      'javascript:alert(1)',
      'data:text/html,hi',
    ];
    const bad = await call('POST', '/seeds', { urls: ['http://ok.test/', ...seeds] });
    expect(bad.status).toBe(400);
    expect(bad.body.problems).toEqual([
      { input: seeds[0], reason: expect.stringMatching(/^address 169\.254\.169\.254 is a cloud metadata endpoint/) },
      { input: seeds[1], reason: expect.stringMatching(/^address ::ffff:7f00:1 .*is not public.*DNS_ALLOW_PRIVATE/) },
      { input: seeds[2], reason: expect.stringMatching(/^address 127\.0\.0\.1 is not public.*DNS_ALLOW_PRIVATE/) },
      { input: seeds[3], reason: expect.stringMatching(/^address 10\.0\.0\.1 is not public.*DNS_ALLOW_PRIVATE/) },
      { input: seeds[4], reason: expect.stringMatching(/^localhost is this machine \(127\.0\.0\.1\): address 127\.0\.0\.1 is not public/) },
      { input: seeds[5], reason: 'scheme javascript: is not http(s)' },
      { input: seeds[6], reason: 'scheme data: is not http(s)' },
    ]);
    expect((await stats.totals()).seeds).toBe(before.seeds);
  });

  it('accepts seeds at private addresses where the crawl may reach them (DNS_ALLOW_PRIVATE, DNS_ALLOW_CIDRS), never the metadata endpoint', async () => {
    for (const env of [{ DNS_ALLOW_PRIVATE: 'true' }, { DNS_ALLOW_CIDRS: '127.0.0.0/8,10.0.0.0/8' }] as Record<string, string>[]) {
      const config = loadConfig(env, { dataDir: dir, logLevel: 'silent', port: 0 });
      @Module({
        imports: [RuntimeModule.forRoot({ service: 'control-plane', config, logger: createLogger({ level: 'silent', service: 'control-plane' }) }), ControlPlaneModule],
      })
      class OpenModule {}
      const open = await NestFactory.create(OpenModule, { logger: false });
      try {
        await open.listen(0, '127.0.0.1');
        const post = (urls: string[]) =>
          fetch(`http://127.0.0.1:${open.getHttpServer().address().port}/seeds`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ urls }),
          });
        const accepted = await post(['http://[::ffff:127.0.0.1]/', 'http://0x7f.1/', '10.0.0.1', 'localhost']);
        expect({ env, status: accepted.status }).toEqual({ env, status: 201 });
        expect(((await accepted.json()) as any).accepted).toEqual(['http://[::ffff:7f00:1]/', 'http://127.0.0.1/', 'https://10.0.0.1/', 'https://localhost/']);
        expect((await post(['http://169.254.169.254/'])).status).toBe(400);
      } finally {
        await open.close();
      }
    }
  });

  it('keeps the dead letters it consumes, newest first, counted by queue', async () => {
    // What a consumer of seen-urls or of a downloader's shard sends when a message does not validate.
    await queues.add(QueueName.DeadLetter, {
      v: 1,
      queue: 'seen-urls',
      reason: 'v: Invalid input: expected 1',
      payload: { v: 99, urls: [] },
      at: new Date().toISOString(),
    });
    await queues.add(QueueName.DeadLetter, { v: 1, queue: 'fetch.x', reason: 'fetchId: Required', payload: { url: 'u' }, at: new Date().toISOString() });
    let letters: any[] = [];
    for (let i = 0; i < 100 && letters.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 20));
      letters = (await call('GET', '/dead-letters')).body.letters;
    }
    expect(letters.map((l: any) => l.queue).sort()).toEqual(['fetch.x', 'seen-urls']);
    expect(letters.find((l: any) => l.queue === 'seen-urls')).toMatchObject({ reason: expect.stringMatching(/^v: /), payload: { v: 99, urls: [] } });
    expect(letters[0].seq).toBeGreaterThan(letters[1].seq);
    const totals = (await call('GET', '/status')).body.totals;
    expect(totals).toMatchObject({ 'dead-letter.seen-urls': 1, 'dead-letter.fetch.x': 1 });
  });

  it('lists failed messages by queue and sends them round again on replay', async () => {
    let broken = true;
    const seen: string[] = [];
    await queues.consume(QueueName.ExtractLinks, async (page) => {
      if (broken) throw new Error(`cannot resolve ${page.url}`);
      seen.push(page.url);
    });
    await queues.add(QueueName.ExtractLinks, { v: 1, url: 'http://a.test/', depth: 0, nofollow: false, links: [] });
    let failed: any;
    for (let i = 0; i < 200 && !failed?.length; i++) {
      await new Promise((r) => setTimeout(r, 20));
      failed = (await call('GET', '/failed')).body;
    }
    expect(failed).toEqual([
      {
        queue: 'extract-links',
        count: 1,
        recent: [{ payload: expect.objectContaining({ url: 'http://a.test/' }), reason: 'cannot resolve http://a.test/', failedAt: expect.any(String) }],
      },
    ]);
    expect((await call('GET', '/failed?queue=no-such')).status).toBe(400);
    broken = false;
    expect((await call('POST', '/failed/replay', { queue: 'extract-links' })).body).toEqual({ replayed: { 'extract-links': 1 } });
    for (let i = 0; i < 100 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(seen).toEqual(['http://a.test/']);
    expect((await call('GET', '/failed')).body).toEqual([]);
  });

  it('pauses and resumes, with the time and reason, and says when nothing is in flight', async () => {
    const paused = await call('POST', '/pause', { reason: 'site owner asked' });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ paused: true, reason: 'site owner asked' });
    expect(Date.parse(paused.body.since)).toBeGreaterThan(Date.now() - 60_000);
    // Pausing again keeps the first pause.
    expect((await call('POST', '/pause', {})).body.since).toBe(paused.body.since);
    const status = (await call('GET', '/status')).body;
    expect(status).toMatchObject({ paused: true, drained: true, inFlight: 0, pause: { reason: 'site owner asked' } });
    expect((await call('POST', '/pause', { speed: 0 })).status).toBe(400);
    const resumed = await call('POST', '/resume', {});
    expect(resumed.body).toEqual({ paused: false, since: null, reason: null });
    expect((await call('GET', '/status')).body).toMatchObject({ paused: false, drained: false });
  });

  it('reports every stage with its queue depth, totals, rates, top hosts and recent errors', async () => {
    await monitor.sample();
    await stats.count('fetched', 5);
    await stats.count('status.5xx', 1);
    await stats.count('error.fetch.timeout-total', 1);
    const outcome = (url: string, extra: Partial<FetchOutcome>): FetchOutcome => ({
      v: 1,
      leaseId: 'l',
      fetchId: 'f',
      url,
      host: new URL(url).host,
      kind: 'fetched',
      requested: true,
      status: 200,
      durationMs: 5,
      ...extra,
    });
    for (let i = 0; i < 3; i++) await activity.recordOutcome(outcome(`http://busy.test/${i}`, {}));
    await activity.recordOutcome(outcome('http://quiet.test/', { status: 500 }));
    await activity.recordOutcome(outcome('http://slow.test/', { kind: 'error', error: 'UND_ERR_HEADERS_TIMEOUT: Headers Timeout Error' }));
    await activity.recordOutcome(outcome('http://gone.test/', { kind: 'error', requested: false, error: 'ENOTFOUND' }));
    await new Promise((r) => setTimeout(r, 20));
    await monitor.sample();

    const { body: status } = await call('GET', '/status');
    expect(status.stages.map((s: any) => s.id)).toEqual([
      'url-filter',
      'url-seen',
      'frontier',
      'dns-resolver',
      'downloader',
      'content-parser',
      'content-seen',
      'url-extractor',
    ]);
    expect(status.stages[0]).toMatchObject({ queue: 'filter-urls', depth: 1, counts: { waiting: 1 } });
    expect(status.stages[4]).toMatchObject({ queue: 'fetch', total: 5, unit: 'pages' });
    expect(status.stages[4].perSecond).toBeGreaterThan(0);
    expect(status.rates.fetched).toBeGreaterThan(0);
    expect(status.rates.errors).toBeGreaterThan(0);
    expect(status.totals).toMatchObject({ fetched: 5, seeds: 2 });
    expect(status.topHosts[0]).toMatchObject({ host: 'busy.test', recentRequests: 3, fetched: 0, queued: 0 });
    expect(status.topHosts.map((h: any) => h.host)).not.toContain('gone.test'); // no request reached it
    expect(status.recentErrors.map((e: any) => [e.kind, e.url, e.status ?? e.error])).toEqual([
      ['address', 'http://gone.test/', 'ENOTFOUND'],
      ['fetch', 'http://slow.test/', 'UND_ERR_HEADERS_TIMEOUT: Headers Timeout Error'],
      ['http', 'http://quiet.test/', 500],
    ]);
    expect(status).toMatchObject({ complete: false, downloaders: 0, frontier: 0 });
  });

  it('keeps a throughput history for the chart, newer than a given time on request', async () => {
    const { body } = await call('GET', '/status/history');
    expect(body.sampleMs).toBe(2000);
    expect(body.points.length).toBeGreaterThanOrEqual(2);
    const last = body.points.at(-1);
    expect(last).toEqual({ t: expect.any(Number), fetched: expect.any(Number), stored: 0, errors: expect.any(Number), links: 0, pending: 1 });
    expect(body.points.some((p: any) => p.fetched > 0)).toBe(true);
    expect((await call('GET', `/status/history?since=${last.t}`)).body.points).toEqual([]);
    expect((await call('GET', '/status/history?since=soon')).status).toBe(400);
  });

  it("looks up a URL's record and serves its stored content as text, a duplicate's from its original", async () => {
    const key = await pages.store(
      { codec: 'gzip', bytes: gzipSync(iconv.encode('<p>Привет</p>', 'windows-1251')) },
      {
        url: 'http://a.test/page',
        fetchedAt: '2024-01-01T00:00:00.000Z',
        status: 200,
        contentType: 'text/html; charset=windows-1251',
        charset: 'windows-1251',
        title: '',
        truncated: false,
        headers: {},
        contentHash: 'a'.repeat(64),
        simhash: '00000000000000ff',
      },
    );
    const records = app.get<RecordsStore>(RECORDS_STORE);
    await records.recordPages([
      { url: 'http://a.test/page', fetchedAt: '2024-01-01T00:00:00.000Z', status: 200, contentKey: key, contentHash: 'a'.repeat(64), simhash: '00ff' },
    ]);
    await records.recordDuplicates([{ url: 'http://a.test/copy', duplicateOf: { kind: 'exact', original: 'http://a.test/page' } }]);

    const stored = await call('GET', `/urls?url=${encodeURIComponent('HTTP://A.test/page?utm_source=x')}`);
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({ url: 'http://a.test/page', state: 'stored', record: { status: 200, contentKey: key }, host: { host: 'a.test' } });
    const duplicate = await call('GET', `/urls?url=${encodeURIComponent('http://a.test/copy')}`);
    expect(duplicate.body).toMatchObject({ state: 'duplicate', duplicateOf: { kind: 'exact', original: 'http://a.test/page' } });

    const body = await call('GET', `/urls/content?url=${encodeURIComponent('http://a.test/copy')}`);
    expect(body.status).toBe(200);
    expect(body.body).toBe('<p>Привет</p>');
    expect(body.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(body.headers.get('content-security-policy')).toBe('sandbox');
    expect(body.headers.get('x-original-url')).toBe('http://a.test/page');
    expect(body.headers.get('x-content-key')).toBe(key);

    const unknown = await call('GET', `/urls?url=${encodeURIComponent('http://a.test/never')}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ state: 'unknown', url: 'http://a.test/never' });
    expect((await call('GET', `/urls/content?url=${encodeURIComponent('http://a.test/never')}`)).status).toBe(404);
    expect((await call('GET', '/urls?url=not-a-url')).status).toBe(400);
    expect((await call('GET', '/urls')).status).toBe(400);
  });

  it('answers a URL lookup with 503 naming the records store while its database is away', async () => {
    const records = app.get<RecordsStore>(RECORDS_STORE);
    const away = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    jest.spyOn(records, 'lookup').mockRejectedValueOnce(new RecordsUnavailableError(away));
    const answer = await call('GET', `/urls?url=${encodeURIComponent('http://a.test/page')}`);
    expect(answer.status).toBe(503);
    expect(answer.body.message).toBe('records store: PostgreSQL unavailable: connect ECONNREFUSED 127.0.0.1:5432');
  });

  it('serves the dashboard: the diagram, the chart, the forms, its own script and style, nothing inline', async () => {
    const page = await call('GET', '/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const policy = page.headers.get('content-security-policy');
    expect(policy).toMatch(/default-src 'none'/);
    expect(policy).toMatch(/script-src 'self'/);
    expect(policy).toMatch(/style-src 'self'/);
    expect(policy).not.toMatch(/unsafe-inline|unsafe-eval|data:|\*/);
    // Nothing inline for the policy to allow: no script or style element with content, no style or on… attribute.
    expect(page.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=|\son[a-z]+=/i);
    expect(page.body).toContain('<script type="module" src="dashboard.js"></script>');
    expect(page.body).toContain('<link rel="stylesheet" href="dashboard.css">');
    const script = await call('GET', '/dashboard.js');
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(script.body).toContain('setInterval(poll, 2000)');
    const style = await call('GET', '/dashboard.css');
    expect(style.headers.get('content-type')).toMatch(/^text\/css/);
    expect(style.body).toMatch(/\[data-series="fetched"\] \{\s*--series: #1f6feb;\s*\}/);
    for (const id of ['url-filter', 'url-seen', 'frontier', 'dns-resolver', 'downloader', 'content-parser', 'content-seen', 'url-extractor', 'storage']) {
      expect(page.body).toContain(`id="box-${id}"`);
    }
    for (const queue of ['seen-urls', 'frontier-add', 'dns-resolve', 'fetch', 'parse', 'content-seen', 'extract-links', 'filter-urls', 'frontier-done']) {
      expect(page.body).toContain(`id="arrow-${queue}"`);
    }
    expect(page.body).toContain('id="chart"');
    expect(page.body).toContain('id="seed-form"');
    // Nothing loaded from elsewhere (the placeholders' example URLs are text).
    for (const text of [page.body, script.body, style.body]) expect(text).not.toMatch(/(src|href)="(https?:)?\/\/|url\(['"]?https?:|fetch\(['"]https?:|@import/);
    expect((await call('GET', '/dashboard')).status).toBe(200);
  });
});

describe('CrawlMonitor', () => {
  it('answers rates over its window and keeps only its last samples', async () => {
    const config = loadConfig({}, { logLevel: 'silent' });
    const state = new MemoryStateStore();
    const stats = new CrawlStats(state, new Registry(), loadConfig({}));
    const frontier = new MemoryFrontierStore(config.frontier);
    const quiet = { warn() {}, info() {} } as unknown as Logger;
    const monitor = new CrawlMonitor(new MemoryQueueTransport(), frontier, state, config, quiet, stats, { ...DEFAULT_MONITOR_OPTIONS, keep: 3, rateWindowMs: 1 });
    expect(monitor.rates().fetched).toBe(0);
    await monitor.sample();
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setTimeout(r, 50));
      await stats.count('fetched', 10);
      await stats.count('processed.fetch.dl-1', 10);
      await monitor.sample();
    }
    expect(monitor.history()).toHaveLength(2); // 3 samples kept: 2 intervals
    const rates = monitor.rates();
    expect(rates.fetched).toBeGreaterThan(50); // 10 pages in ~50 ms
    expect(rates.fetched).toBeLessThan(400);
    expect(rates['processed.fetch']).toBe(rates.fetched); // the shards' counters summed
  });
});
