import http from 'node:http';
import { AddressInfo } from 'node:net';
import { loadConfig } from '@crawler/config';
import { FrontierStoreOptions, RedisFrontierStore } from '@crawler/frontier-store';
import { CachedResolver, ResolverEvents } from '@crawler/net';
import { RobotsCache } from '@crawler/robots';
import { MemoryStateStore, RedisStateStore } from '@crawler/state';
import { PortPolicy } from '@crawler/url';
import { GateOptions, SubrequestGate } from './subrequest-gate';

const url = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const QUIET: ResolverEvents = { count: async () => undefined, lookup: () => undefined, refresh: () => undefined, warn: () => undefined };

const STORE: FrontierStoreOptions = { frontQueues: 2, backQueues: 8, priorityBias: 2, auditLength: 5, perHostLimit: 1, perIpLimit: 8, perIpIntervalMs: 0 };

/**
 * The gate's pacing, as two render replicas see it: two gates, each with its own connection to one real
 * Redis holding the crawl's frontier (the distributed shape), asking one local site (`a.test` and `b.test`,
 * both on 127.0.0.1) at once. The site notes when each request arrives.
 */
describe('SubrequestGate politeness, in the frontier’s schedule shared through Redis', () => {
  let server: http.Server;
  let port: number;
  let robotsTxt = '';
  const arrivals: { host: string; path: string; at: number }[] = [];
  const stores: RedisStateStore[] = [];
  const frontiers: RedisFrontierStore[] = [];
  const robotsLog: { url: string; status: number | null; body: string | null }[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      arrivals.push({ host: req.headers.host!.split(':')[0], path: req.url!, at: performance.now() });
      if (req.url === '/robots.txt') return res.writeHead(200, { 'content-type': 'text/plain' }).end(robotsTxt);
      if (req.url === '/busy') return res.writeHead(429, { 'retry-after': '2' }).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.close();
    await stores[0]?.clear();
    await Promise.all(stores.map((s) => s.close()));
    for (const f of frontiers) await f.clear();
    await Promise.all(frontiers.map((f) => f.close()));
  });

  beforeEach(() => (arrivals.length = 0));

  /**
   * Two replicas' gates on one shared Redis prefix, with these politeness settings, and a third connection
   * to the frontier store they take turns in (the frontier's own, as the dispatcher reaches it).
   */
  function replicas(delays: Partial<GateOptions['politeness']>, store: Partial<FrontierStoreOptions> = {}): [SubrequestGate, SubrequestGate, RedisFrontierStore] {
    const prefix = `t31h6-render-turns-${process.pid}-${Math.random().toString(36).slice(2)}`;
    const politeness = { minDelayMs: 0, delayMultiplier: 0, recentResponses: 5, maxBackoffMs: 60_000, allowDelayBelowMin: false, ...delays };
    const frontier = () => {
      const f = new RedisFrontierStore({ url, prefix: `${prefix}:frontier` }, { ...STORE, ...store });
      frontiers.push(f);
      return f;
    };
    const gates = [0, 1].map(() => {
      const shared = new RedisStateStore({ url, prefix });
      stores.push(shared);
      return new SubrequestGate({
        resolver: new CachedResolver(
          new MemoryStateStore(),
          loadConfig({}, { 'dns.allowCidrs': ['127.0.0.1/32'], 'dns.hosts': { 'a.test': '127.0.0.1', 'b.test': '127.0.0.1' } }).dns,
          QUIET,
        ),
        ports: new PortPolicy(),
        userAgent: 'TestBot/1.0',
        maxBytes: 1 << 20,
        // The site's robots.txt as the downloader cached it for the whole crawl.
        robots: new RobotsCache(shared.namespace('robots')),
        onRobots: (robotsUrl, status, body) => robotsLog.push({ url: robotsUrl, status, body }),
        robotsTtlMs: 60_000,
        robotsMaxBytes: 512_000,
        frontier: frontier(),
        turnLeaseMs: 10_000,
        politeness,
        maxRedirects: 5,
      });
    });
    return [gates[0], gates[1], frontier()];
  }

  const get = (gate: SubrequestGate, target: string) => gate.fetch(target, { method: 'GET', headers: {} }, new AbortController().signal);
  /** Gaps between consecutive arrivals of these requests, ms. */
  const gaps = (keep: (a: (typeof arrivals)[number]) => boolean) => {
    const times = arrivals.filter(keep).map((a) => a.at);
    return times.slice(1).map((t, i) => t - times[i]);
  };
  // Turns space the sends; arrivals differ from them by each request's own latency, which a loaded machine
  // stretches (a late first arrival shortens the gap to the next). Without the turns, the gaps are ~0.
  const SLACK_MS = 100;

  it('spaces the requests of both replicas to one host by FRONTIER_MIN_DELAY_MS, as one crawler', async () => {
    robotsTxt = 'User-agent: *\nAllow: /\n';
    const [one, two] = replicas({ minDelayMs: 300 });
    await Promise.all([
      get(one, `http://a.test:${port}/1`),
      get(two, `http://a.test:${port}/2`),
      get(one, `http://a.test:${port}/3`),
      get(two, `http://a.test:${port}/4`),
    ]);
    const pages = (a: (typeof arrivals)[number]) => a.path !== '/robots.txt';
    expect(arrivals.filter(pages)).toHaveLength(4);
    // robots.txt too waits its turn: every request to the host counts.
    for (const gap of gaps(() => true)) expect(gap).toBeGreaterThanOrEqual(300 - SLACK_MS);
  }, 20_000);

  it("takes the host's robots.txt Crawl-delay when it is longer", async () => {
    robotsTxt = 'User-agent: *\nCrawl-delay: 1\n';
    const [one, two] = replicas({});
    await get(one, `http://a.test:${port}/robots-first`);
    arrivals.length = 0;
    await Promise.all([get(one, `http://a.test:${port}/1`), get(two, `http://a.test:${port}/2`)]);
    expect(gaps(() => true)).toEqual([expect.any(Number)]);
    expect(gaps(() => true)[0]).toBeGreaterThanOrEqual(1000 - SLACK_MS);
  }, 20_000);

  it("holds the host for both replicas after a 429, for its Retry-After (longer than the backoff's 1 s)", async () => {
    robotsTxt = 'User-agent: *\nAllow: /\n';
    const [one, two] = replicas({});
    await get(one, `http://a.test:${port}/busy`);
    await get(two, `http://a.test:${port}/after`);
    const busy = arrivals.find((a) => a.path === '/busy')!.at;
    const after = arrivals.find((a) => a.path === '/after')!.at;
    expect(after - busy).toBeGreaterThanOrEqual(2000 - SLACK_MS);
  }, 20_000);

  it('spaces requests to two hosts on one address by FRONTIER_PER_IP_INTERVAL_MS', async () => {
    robotsTxt = 'User-agent: *\nAllow: /\n';
    const [one, two] = replicas({}, { perIpIntervalMs: 400 });
    await Promise.all([get(one, `http://a.test:${port}/1`), get(two, `http://b.test:${port}/1`)]);
    const pages = (a: (typeof arrivals)[number]) => a.path === '/1';
    expect(
      arrivals
        .filter(pages)
        .map((a) => a.host)
        .sort(),
    ).toEqual(['a.test', 'b.test']);
    expect(gaps(pages)[0]).toBeGreaterThanOrEqual(400 - SLACK_MS);
  }, 20_000);

  it("holds a sub-request while the frontier has one of the host's URLs in flight, then for the host's delay after it", async () => {
    robotsTxt = 'User-agent: *\nAllow: /\n';
    const [one, , frontier] = replicas({ minDelayMs: 0 });
    const host = `a.test:${port}`;
    await frontier.enqueue([{ host, priority: 0, item: 'page' }], Date.now());
    const [claim] = await frontier.claim({ now: Date.now(), max: 1, leaseMs: 10_000 });
    expect(claim.host).toBe(host);
    const asked = performance.now();
    const sub = get(one, `http://a.test:${port}/api`);
    // The downloader's request takes 500 ms; its completion sets the host's rest (the frontier's delay) to 700 ms.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(arrivals).toEqual([]);
    const done = Date.now();
    await frontier.complete(claim.leaseId, { nextAt: done + 700, fetched: true }, done);
    expect((await sub).ok).toBe(true);
    expect(arrivals[0].at - asked).toBeGreaterThanOrEqual(1200 - SLACK_MS);
  }, 20_000);

  it('counts a sub-request against FRONTIER_PER_IP_LIMIT with the frontier’s own requests to that address', async () => {
    robotsTxt = 'User-agent: *\nAllow: /\n';
    const [one, , frontier] = replicas({}, { perIpLimit: 1 });
    const host = `b.test:${port}`;
    // b.test is known at 127.0.0.1 (a completion said so) and has a URL in flight there.
    await frontier.enqueue(
      [
        { host, priority: 0, item: 'resolve' },
        { host, priority: 0, item: 'page' },
      ],
      Date.now(),
    );
    const [resolve] = await frontier.claim({ now: Date.now(), max: 1, leaseMs: 10_000 });
    await frontier.complete(resolve.leaseId, { nextAt: Date.now(), ip: '127.0.0.1' }, Date.now());
    const [claim] = await frontier.claim({ now: Date.now(), max: 1, leaseMs: 10_000 });
    expect(claim).toMatchObject({ item: 'page', ip: '127.0.0.1' });
    const asked = performance.now();
    const sub = get(one, `http://a.test:${port}/other-host`);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(arrivals).toEqual([]);
    await frontier.complete(claim.leaseId, { nextAt: Date.now(), fetched: true }, Date.now());
    expect((await sub).ok).toBe(true);
    expect(arrivals[0].at - asked).toBeGreaterThanOrEqual(400 - SLACK_MS);
  }, 20_000);
});
