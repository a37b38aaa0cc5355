import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { collectKeys, MinioContentStore, S3TestServer, startS3TestServer } from '@crawler/content-store';
import { TestWeb } from '../web/test-web';
import { expectedStoredPages, expectPoliteCompleteCrawl } from './crawl-expectations';
import { RunningService, SERVICES, startService, stopService } from '../support/service-processes';
import { clearPrefix, REDIS_URL } from '../support/redis-prefix';
import { removeTempDirs, tempDir } from '../support/temp-dirs';

const DELAY_MS = 200;

afterAll(removeTempDirs);

/**
 * The distributed shape: every service its own OS process (two frontier replicas, two downloaders on the
 * hash ring), BullMQ on the real Redis, page bodies in a real S3-compatible server, seeds submitted through
 * the control plane's HTTP API.
 */
describe('distributed crawl (every service a process)', () => {
  const prefix = `e2e-${randomBytes(4).toString('hex')}`;
  const bucket = `crawl-${prefix}`;
  let web: TestWeb;
  let s3: S3TestServer;
  let services: RunningService[] = [];
  let status: any;
  let exitCodes: (number | null)[];
  let health: number[];
  let audits: { at: number; event: string; nextAt?: number }[][];
  let metrics: string;

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 200 });
    s3 = await startS3TestServer();
    const hostsFile = join(tempDir('dist-e2e-'), 'testweb.hosts');
    writeFileSync(hostsFile, web.hostsFile());
    const env = {
      REDIS_URL,
      S3_URL: s3.url,
      S3_BUCKET: bucket,
      CRAWLER_PREFIX: prefix,
      DNS_HOSTS_FILE: hostsFile,
      DNS_ALLOW_PRIVATE: 'true',
      URL_FILTER_SCOPE: 'any',
      URL_FILTER_MAX_DEPTH: '1000',
      FRONTIER_MIN_DELAY_MS: String(DELAY_MS),
      LOG_LEVEL: 'info',
    };
    // Two frontier replicas share the frontier's state; two downloaders share the hosts on the hash ring.
    services = await Promise.all([...SERVICES, 'frontier', 'downloader'].map((name) => startService(name, env)));
    const control = `http://127.0.0.1:${services.find((s) => s.name === 'control-plane')!.port}`;

    const response = await fetch(`${control}/seeds`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ urls: web.seeds() }),
    });
    expect(response.status).toBe(201);
    const deadline = Date.now() + 150_000;
    do {
      await new Promise((r) => setTimeout(r, 500));
      status = await (await fetch(`${control}/status`)).json();
    } while (!status.complete && Date.now() < deadline);
    audits = await Promise.all(
      web.hostNames.slice(0, 30).map(async (host) => ((await (await fetch(`${control}/hosts/${host}:${web.port}`)).json()) as any).audit),
    );
    health = await Promise.all(services.map(async (s) => (await fetch(`http://127.0.0.1:${s.port}/health`)).status));
    // When a check fails, say why (the test's own assertion only sees the status codes).
    const sick = services.find((_, i) => health[i] !== 200);
    if (sick) console.log(`${sick.name} /health:`, await (await fetch(`http://127.0.0.1:${sick.port}/health`)).text());
    metrics = await (await fetch(`http://127.0.0.1:${services.find((s) => s.name === 'downloader')!.port}/metrics`)).text();
    exitCodes = await Promise.all(services.map((s) => stopService(s)));
  }, 240_000);

  afterAll(async () => {
    await Promise.all(services.map((s) => stopService(s, 2000)));
    await clearPrefix(prefix);
    await s3?.close();
    await web?.close();
  });

  it('spreads the hosts over both downloaders', () => {
    const shards = Object.keys(status.totals).filter((k) => k.startsWith('processed.fetch.'));
    expect(shards).toHaveLength(2);
    for (const shard of shards) expect(status.totals[shard]).toBeGreaterThan(100);
  });

  it('terminates on its own, as the control plane reports', () => {
    expect(status.complete).toBe(true);
    expect(status.totals.fetched).toBe(web.expected.reachable.size);
    expect(Object.keys(status.totals).filter((k) => k.startsWith('failed.'))).toEqual([]);
  });

  it('fetches every reachable allowed page once, nothing disallowed, robots.txt first, politely', () => {
    expectPoliteCompleteCrawl(web, { delayMs: DELAY_MS });
  });

  it('stores pages in S3, exact duplicates once', async () => {
    const copies = web.expected.duplicates.reduce((n, g) => n + g.length - 1, 0);
    expect(status.totals.duplicate).toBe(copies);
    const store = await MinioContentStore.connect({ url: s3.url, bucket });
    expect((await collectKeys(store.list('pages/'))).length).toBe(expectedStoredPages(web));
    expect(await collectKeys(store.list('staging/'))).toEqual([]);
  });

  it('keeps a politeness audit per host showing no dispatch before the delay in force', () => {
    let dispatches = 0;
    for (const audit of audits) {
      let notBefore = 0;
      for (const entry of audit) {
        if (entry.event === 'dispatch') {
          expect(entry.at).toBeGreaterThanOrEqual(notBefore);
          dispatches++;
        } else if (entry.nextAt) notBefore = entry.nextAt;
      }
    }
    expect(dispatches).toBeGreaterThan(30);
  });

  it('every service answers /health and serves Prometheus /metrics', () => {
    expect(health).toEqual(services.map(() => 200));
    expect(metrics).toMatch(/crawler_events_total\{[^}]*event="fetched"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/crawler_queue_jobs\{/);
  });

  it('every service drains and exits 0 on SIGTERM', () => {
    expect(exitCodes).toEqual(services.map(() => 0));
  });
});

