import { collectKeys, MinioContentStore } from '@crawler/content-store';
import { TestWeb } from '../web/test-web';
import { expectedStoredPages, expectPoliteCompleteCrawl } from './crawl-expectations';
import { storedPages } from '../support/stored-pages';
import { TestWebCluster } from '../support/test-web-cluster';

const DELAY_MS = 200;

/**
 * The distributed shape: every service its own OS process (two frontier replicas, two downloaders on the
 * hash ring), BullMQ on the real Redis, page bodies in a real S3-compatible server, seeds submitted through
 * the control plane's HTTP API.
 */
describe('distributed crawl (every service a process)', () => {
  let web: TestWeb;
  let cluster: TestWebCluster;
  let status: any;
  let exitCodes: (number | null)[];
  let health: number[];
  let audits: { at: number; event: string; nextAt?: number }[][];
  let metrics: string;

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 200 });
    // Two frontier replicas share the frontier's state; two downloaders share the hosts on the hash ring.
    cluster = await new TestWebCluster(web).start({ env: { FRONTIER_MIN_DELAY_MS: String(DELAY_MS) }, extra: ['frontier', 'downloader'] });
    expect(await cluster.seed(web.seeds())).toBe(201);
    status = await cluster.until((s) => s.complete, 150_000, 500);
    audits = await Promise.all(
      web.hostNames.slice(0, 30).map(async (host) => ((await (await fetch(`${cluster.control}/hosts/${host}:${web.port}`)).json()) as any).audit),
    );
    // Readiness, as a probe reads it: retried for a while (a loaded S3 server can miss the 2 s check once).
    health = await Promise.all(cluster.services.map((s) => readyStatus(s.port, 30_000)));
    // When a check fails, say why (the test's own assertion only sees the status codes).
    const sick = cluster.services.find((_, i) => health[i] !== 200);
    if (sick) console.log(`${sick.name} /health:`, await (await fetch(`http://127.0.0.1:${sick.port}/health`)).text());
    metrics = await (await fetch(`http://127.0.0.1:${cluster.services.find((s) => s.name === 'downloader')!.port}/metrics`)).text();
    exitCodes = await cluster.stopServices();
  }, 240_000);

  afterAll(async () => {
    await cluster?.close();
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
    const store = await MinioContentStore.connect({ url: cluster.s3Url, bucket: cluster.prefix });
    expect((await storedPages(store)).size).toBe(expectedStoredPages(web));
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
    expect(health).toEqual(cluster.services.map(() => 200));
    expect(metrics).toMatch(/crawler_events_total\{[^}]*event="fetched"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/crawler_queue_jobs\{/);
    // A downloader reports the depth of its own shard of the fetch queue.
    expect(metrics).toMatch(/crawler_queue_jobs\{[^}]*queue="fetch\.[A-Za-z0-9_-]+"/);
  });

  it('every service drains and exits 0 on SIGTERM', () => {
    expect(exitCodes).toEqual(cluster.services.map(() => 0));
  });
});

/** The /health status once it is 200, or the last one seen when `withinMs` runs out (polled once a second). */
async function readyStatus(port: number, withinMs: number): Promise<number> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const status = (await fetch(`http://127.0.0.1:${port}/health`)).status;
    if (status === 200 || Date.now() > deadline) return status;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
