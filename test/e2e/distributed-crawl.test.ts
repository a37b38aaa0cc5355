import { MinioContentStore } from '@crawler/content-store';
import { collectKeys } from '@crawler/content-store/testing';
import { TestWeb } from '../web/test-web';
import { expectedStoredPages, expectPoliteCompleteCrawl } from './crawl-expectations';
import { storedPages } from '../support/stored-pages';
import { REDIS_CLUSTER_URL } from '../support/redis-cluster';
import { REDIS_URL } from '../support/redis-prefix';
import { TestWebCluster } from '../support/test-web-cluster';
import { keysByMaster } from '../support/redis-keys';

const DELAY_MS = 200;

/**
 * The distributed shape: every service its own OS process (two frontier replicas, two downloaders on the
 * hash ring), BullMQ on the real Redis, page bodies in a real S3-compatible server, seeds submitted through
 * the control plane's HTTP API. Once on one Redis node, once on a Redis Cluster of 3 masters (and 3
 * replicas): the same crawl, the same expectations, only REDIS_URL differs.
 */
describe.each([
  ['one Redis node', REDIS_URL],
  ['a Redis Cluster', REDIS_CLUSTER_URL],
])('distributed crawl (every service a process) on %s', (_, redisUrl) => {
  let web: TestWeb;
  let cluster: TestWebCluster;
  let status: any;
  let exitCodes: (number | null)[];
  let health: number[];
  let audits: { at: number; event: string; nextAt?: number }[][];
  let metrics: string;
  let frontierMetrics: string;
  /** What each downloader process says it handled from its shard of fetch. */
  let fetchesByDownloader: number[];
  /** The crawl's keys on each master, read before the services stop (one entry on a node). */
  let keys: Map<string, string[]>;

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 200 });
    // Two frontier replicas share the frontier's state; two downloaders share the hosts on the hash ring.
    cluster = await new TestWebCluster(web).start({ env: { REDIS_URL: redisUrl, FRONTIER_MIN_DELAY_MS: String(DELAY_MS) }, extra: ['frontier', 'downloader'] });
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
    fetchesByDownloader = await Promise.all(
      cluster.services
        .filter((s) => s.name === 'downloader')
        .map(async (s) => {
          const text = await (await fetch(`http://127.0.0.1:${s.port}/metrics`)).text();
          return Number(/^crawler_queue_jobs_handled_total\{[^}]*queue="fetch"[^}]*outcome="completed"[^}]*\} (\d+)/m.exec(text)?.[1] ?? 0);
        }),
    );
    frontierMetrics = await (await fetch(`http://127.0.0.1:${cluster.services.find((s) => s.name === 'frontier')!.port}/metrics`)).text();
    keys = await keysByMaster(redisUrl, cluster.prefix);
    exitCodes = await cluster.stopServices();
  }, 240_000);

  afterAll(async () => {
    await cluster?.close();
    await web?.close();
  });

  it('spreads the hosts over both downloaders', () => {
    // Each downloader counts its own shard as the queue fetch (no id in a series), so ask each one.
    expect(fetchesByDownloader).toHaveLength(2);
    for (const handled of fetchesByDownloader) expect(handled).toBeGreaterThan(100);
    // The totals are statistics flushed every 100 ms and re-sent when a flush's answer is lost, so they may run
    // one or two ahead of the processes' own counters; they must not fall behind or drift further.
    const handled = fetchesByDownloader[0] + fetchesByDownloader[1];
    expect(status.totals['processed.fetch']).toBeGreaterThanOrEqual(handled);
    expect(status.totals['processed.fetch']).toBeLessThanOrEqual(handled + 2);
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
      // In time order: a dispatch is dated when its URL is sent (its entry is written once the whole claim is
      // sent, by when its own fetch may have completed). At equal times the dispatch came first.
      const inTimeOrder = [...audit].sort((a, b) => a.at - b.at || Number(b.event === 'dispatch') - Number(a.event === 'dispatch'));
      for (const entry of inTimeOrder) {
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
    expect(metrics).toMatch(/crawler_queue_messages\{[^}]*queue="parse"/);
    // A downloader reports the depth of its own shards as the queue fetch: no series is named after a process.
    expect(metrics).toMatch(/crawler_queue_messages\{[^}]*queue="fetch"/);
    expect(metrics).not.toMatch(/="fetch\.[A-Za-z0-9_-]+"/);
    for (const gauge of ['crawler_frontier_urls', 'crawler_frontier_hosts', 'crawler_frontier_leases', 'crawler_downloaders']) {
      expect(frontierMetrics).toContain(`# TYPE ${gauge} gauge`);
    }
  });

  it("spreads the crawl's state over every master (queues, frontier shards, URL-seen, totals)", () => {
    const masters = [...keys.values()];
    expect(masters).toHaveLength(redisUrl === REDIS_CLUSTER_URL ? 3 : 1);
    for (const held of masters) {
      expect(held.some((k) => k.startsWith(`${cluster.prefix}:frontier:`))).toBe(true);
      expect(held.some((k) => k.startsWith(`${cluster.prefix}:url-seen:`))).toBe(true);
      expect(held.some((k) => k.startsWith(`${cluster.prefix}:stats:totals`))).toBe(true);
    }
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
