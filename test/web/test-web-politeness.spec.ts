import http from 'node:http';
import { AddressInfo } from 'node:net';
import { Parser } from 'htmlparser2';
import { normaliseUrl } from './expected-crawl';
import { EXPIRES_AFTER_MS, LoggedRequest, SHARED_ADDRESS, TestWeb } from './test-web';

interface Fetched {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** ms from sending the request to receiving the response headers. */
  headersAfterMs: number;
}

interface Via {
  /** Local address to connect to; the hosts-file address of the host when omitted. */
  address?: string;
  headers?: http.OutgoingHttpHeaders;
  method?: string;
}

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** GET `url` through the given local address (its hosts-file address by default) with the Host header. */
function fetchVia(web: TestWeb, url: string, via: Via = {}): Promise<Fetched> {
  const target = new URL(url);
  const address = via.address ?? web.addressOf(target.hostname) ?? '127.0.0.1';
  const started = now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: address,
        port: web.port,
        method: via.method ?? 'GET',
        path: target.pathname + target.search,
        headers: { ...via.headers, host: target.host },
        agent: false,
      },
      (res) => {
        const headersAfterMs = now() - started;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), headersAfterMs }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function get(web: TestWeb, host: string, path: string, via?: Via): Promise<Fetched> {
  return fetchVia(web, new URL(path, web.origin(host)).href, via);
}

function linksOf(html: string, pageUrl: string): string[] {
  const hrefs: string[] = [];
  const parser = new Parser({
    onopentag(name, attrs) {
      if (name === 'a' && attrs.href !== undefined) hrefs.push(attrs.href);
    },
  });
  parser.write(html);
  parser.end();
  return hrefs.map((h) => normaliseUrl(h, pageUrl));
}

/** Every URL reachable from `seeds` by following links of 200 pages (no robots: the dedicated hosts allow all). */
async function crawl(web: TestWeb, seeds: string[], inScope: (url: string) => boolean): Promise<Set<string>> {
  const seen = new Set(seeds);
  const queue = [...seeds];
  for (let i = 0; i < queue.length; i++) {
    const res = await fetchVia(web, queue[i]);
    if (res.status !== 200) continue;
    for (const link of linksOf(res.body.toString(), queue[i])) {
      if (!seen.has(link) && inScope(link)) {
        seen.add(link);
        queue.push(link);
      }
    }
  }
  return seen;
}

const portless = (web: TestWeb, urls: Iterable<string>) => [...urls].map((u) => u.replace(`:${web.port}/`, '/')).sort();
const statuses = (log: ReadonlyArray<LoggedRequest>) => log.map(({ host, path, status }) => `${host}${path} ${status}`);

describe('TestWeb rate-limited hosts', () => {
  let web: TestWeb;

  beforeAll(async () => {
    web = await TestWeb.start({
      hosts: 12,
      rateLimitedHosts: [
        { status: 429, retryAfterSeconds: 2, failures: 2 },
        { status: 503, failures: 1 },
      ],
    });
  });
  afterAll(() => web.close());
  beforeEach(() => web.reset());

  it('names the hosts, seeds them and lists their pages outside expected.reachable', () => {
    expect(web.roles.rateLimited).toEqual(['limited-0.test', 'limited-1.test']);
    expect(web.dedicatedHostNames).toEqual(['limited-0.test', 'limited-1.test']);
    expect(web.extraSeeds()).toEqual([`${web.origin('limited-0.test')}/`, `${web.origin('limited-1.test')}/`]);
    expect(web.seeds()).toEqual([`${web.origin('site-000.test')}/`]);
    expect([...web.expected.rateLimited.keys()]).toEqual(web.roles.rateLimited);
    for (const [host, pages] of web.expected.rateLimited) {
      expect(pages).toEqual(['/', '/p/1', '/p/2', '/p/3'].map((p) => `${web.origin(host)}${p}`));
      for (const url of pages) expect(web.expected.reachable.has(url)).toBe(false);
    }
    expect(web.hostsFile()).toContain('127.0.0.1 limited-0.test\n127.0.0.1 limited-1.test\n');
    expect(web.addressOf('limited-1.test')).toBe('127.0.0.1');
  });

  it('answers 429 with Retry-After for the first failures, then 200; robots.txt is never limited nor counted', async () => {
    const host = 'limited-0.test';
    const robots = await get(web, host, '/robots.txt');
    expect(robots.status).toBe(200);
    expect(robots.body.toString()).toBe('User-agent: *\nDisallow:\n');

    const first = await get(web, host, '/');
    expect(first.status).toBe(429);
    expect(first.headers['retry-after']).toBe('2');
    expect((await get(web, host, '/robots.txt')).status).toBe(200);
    const second = await get(web, host, '/p/2');
    expect(second.status).toBe(429);
    expect(second.headers['retry-after']).toBe('2');

    const third = await get(web, host, '/');
    expect(third.status).toBe(200);
    expect(third.headers['retry-after']).toBeUndefined();
    expect(third.headers['content-type']).toBe('text/html; charset=utf-8');
    const links = linksOf(third.body.toString(), `${web.origin(host)}/`);
    expect(links.sort()).toEqual(['/p/1', '/p/2', '/p/3'].map((p) => `${web.origin(host)}${p}`));
    expect((await get(web, host, '/p/2')).status).toBe(200);

    expect(statuses(web.requests)).toEqual([`${host}/robots.txt 200`, `${host}/ 429`, `${host}/robots.txt 200`, `${host}/p/2 429`, `${host}/ 200`, `${host}/p/2 200`]);
  });

  it('answers 503 without Retry-After on the other host, counting its requests separately', async () => {
    const res = await get(web, 'limited-1.test', '/p/3');
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBeUndefined();
    expect((await get(web, 'limited-1.test', '/p/3')).status).toBe(200);
    // limited-0 still has its own two failures left (reset() restarted them).
    expect((await get(web, 'limited-0.test', '/p/1')).status).toBe(429);
  });

  it('restarts the failure count on reset()', async () => {
    expect((await get(web, 'limited-1.test', '/')).status).toBe(503);
    expect((await get(web, 'limited-1.test', '/')).status).toBe(200);
    web.reset();
    expect((await get(web, 'limited-1.test', '/')).status).toBe(503);
  });

  it('lets a crawler that retries reach all four pages of each host', async () => {
    const fetched = new Set<string>();
    for (const [, pages] of web.expected.rateLimited) {
      for (const url of pages) {
        let res = await fetchVia(web, url);
        while (res.status === 429 || res.status === 503) res = await fetchVia(web, url);
        expect(res.status).toBe(200);
        fetched.add(url);
      }
    }
    expect(fetched.size).toBe(8);
    expect(web.requestCount('limited-0.test')).toBe(4 + 2);
    expect(web.requestCount('limited-1.test')).toBe(4 + 1);
  });
});

describe('TestWeb slow hosts', () => {
  let web: TestWeb;
  const delayMs = 250;

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 12, slowHosts: [{ delayMs }, { delayMs: 0 }] });
  });
  afterAll(() => web.close());
  beforeEach(() => web.reset());

  it('names the hosts and seeds them', () => {
    expect(web.roles.slow).toEqual(['slow-0.test', 'slow-1.test']);
    expect(web.extraSeeds()).toEqual([`${web.origin('slow-0.test')}/`, `${web.origin('slow-1.test')}/`]);
    expect(web.expected.slow.get('slow-0.test')).toHaveLength(4);
    expect(web.roles.rateLimited).toEqual([]);
  });

  it('holds page answers back delayMs before the headers, but not robots.txt', async () => {
    const robots = await get(web, 'slow-0.test', '/robots.txt');
    expect(robots.status).toBe(200);
    expect(robots.headersAfterMs).toBeLessThan(delayMs - 100);

    const page = await get(web, 'slow-0.test', '/p/1');
    expect(page.status).toBe(200);
    expect(page.headersAfterMs).toBeGreaterThanOrEqual(delayMs);
    const [, logged] = web.requests;
    expect(logged.path).toBe('/p/1');
    expect(logged.endAt! - logged.at).toBeGreaterThanOrEqual(delayMs - 1);

    expect((await get(web, 'slow-0.test', '/nothing-here')).headersAfterMs).toBeGreaterThanOrEqual(delayMs);
    expect((await get(web, 'slow-1.test', '/')).headersAfterMs).toBeLessThan(delayMs - 100);
  });

  it('records endAt and the smallest rest between one answer and the next request to the host', async () => {
    await get(web, 'slow-0.test', '/');
    await sleep(80);
    await get(web, 'slow-0.test', '/p/1');
    const [a, b] = web.requests;
    expect(a.endAt).toBeGreaterThanOrEqual(a.at + delayMs - 1);
    expect(b.at).toBeGreaterThan(a.endAt!);
    const gap = web.minGapAfterResponseByHost().get('slow-0.test')!;
    expect(gap).toBe(b.at - a.endAt!);
    expect(gap).toBeGreaterThanOrEqual(70);
    // Arrival-to-arrival gap includes the delay; the after-response gap does not.
    expect(web.minIntervalMs('slow-0.test')).toBeGreaterThanOrEqual(delayMs + 70);

    await Promise.all([get(web, 'slow-1.test', '/'), get(web, 'slow-0.test', '/p/2'), get(web, 'slow-0.test', '/p/3')]);
    expect(web.minGapAfterResponseByHost().get('slow-0.test')).toBeLessThan(0);
    expect(web.minGapAfterResponseByHost().get('site-000.test')).toBeUndefined();
  });

  it('counts an answer still held back as in flight and ending no earlier than now', async () => {
    const pending = get(web, 'slow-0.test', '/');
    await sleep(50);
    expect(web.requests[0].endAt).toBeUndefined();
    const second = get(web, 'slow-0.test', '/p/1');
    await sleep(50);
    expect(web.minGapAfterResponseByHost().get('slow-0.test')).toBeLessThan(0);
    expect(web.maxConcurrentByHost().get('slow-0.test')).toBe(2);
    await Promise.all([pending, second]);
  });
});

describe('TestWeb shared-address hosts', () => {
  let web: TestWeb;

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 12, sharedIpHosts: 3, slowHosts: [{ delayMs: 200 }] });
  });
  afterAll(() => web.close());
  beforeEach(() => web.reset());

  it('maps the shared hosts to 127.0.0.2 in the hosts file and seeds only the first', () => {
    expect(web.roles.sharedIp).toEqual(['shared-0.test', 'shared-1.test', 'shared-2.test']);
    const lines = web.hostsFile().trim().split('\n');
    expect(lines).toHaveLength(12 + 1 + 3);
    expect(lines.slice(-3)).toEqual(['127.0.0.2 shared-0.test', '127.0.0.2 shared-1.test', '127.0.0.2 shared-2.test']);
    expect(lines.filter((l) => l.startsWith('127.0.0.2 '))).toHaveLength(3);
    expect(web.addressOf('shared-1.test')).toBe(SHARED_ADDRESS);
    expect(web.addressOf('site-003.test')).toBe('127.0.0.1');
    expect(web.addressOf('nowhere.test')).toBeUndefined();
    expect(web.extraSeeds()).toEqual([`${web.origin('slow-0.test')}/`, `${web.origin('shared-0.test')}/`]);
    expect(web.expected.sharedIp).toHaveLength(12);
  });

  it('reaches every shared page from the first home page, through 127.0.0.2', async () => {
    const seed = `${web.origin('shared-0.test')}/`;
    const reached = await crawl(web, [seed], (u) => new URL(u).hostname.startsWith('shared-'));
    expect(portless(web, reached)).toEqual(portless(web, web.expected.sharedIp));
    expect(web.requests.length).toBe(12);
    expect(web.requests.every((r) => r.localAddress === '127.0.0.2')).toBe(true);
    for (const url of web.expected.sharedIp) expect(web.expected.reachable.has(url)).toBe(false);
  });

  it('serves any host on either address and logs which one the request came in on', async () => {
    expect((await get(web, 'shared-1.test', '/p/1', { address: '127.0.0.1' })).status).toBe(200);
    expect((await get(web, 'shared-1.test', '/p/1')).status).toBe(200);
    expect((await get(web, 'site-001.test', '/', { address: '127.0.0.2' })).status).toBe(200);
    expect((await get(web, 'site-001.test', '/')).status).toBe(200);
    expect(web.requests.map((r) => `${r.host} ${r.localAddress}`)).toEqual([
      'shared-1.test 127.0.0.1',
      'shared-1.test 127.0.0.2',
      'site-001.test 127.0.0.2',
      'site-001.test 127.0.0.1',
    ]);
  });

  it('measures the smallest gap per address across hosts', async () => {
    await get(web, 'shared-0.test', '/');
    await sleep(60);
    await get(web, 'shared-1.test', '/');
    // Far longer than the first gap, which a loaded machine stretches (129 ms once, against 120 then).
    await sleep(500);
    await get(web, 'shared-2.test', '/');
    await get(web, 'site-002.test', '/');
    const byAddress = web.minIntervalByAddress();
    const gap = byAddress.get('127.0.0.2')!;
    expect(gap).toBeGreaterThanOrEqual(50);
    expect(gap).toBeLessThan(500);
    expect(byAddress.get('127.0.0.1')).toBe(Infinity);
    // Per host every shared host got one request only.
    expect(web.minIntervalMs('shared-0.test')).toBe(Infinity);
    expect(web.maxConcurrentByAddress().get('127.0.0.2')).toBe(1);
  });

  it('tracks requests in flight per host and per address for two overlapping requests', async () => {
    const [a, b] = await Promise.all([get(web, 'slow-0.test', '/', { address: SHARED_ADDRESS }), get(web, 'slow-0.test', '/p/1', { address: SHARED_ADDRESS })]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(web.maxConcurrentByHost().get('slow-0.test')).toBe(2);
    expect(web.maxConcurrentByAddress().get('127.0.0.2')).toBe(2);
    expect(web.maxConcurrentByAddress().has('127.0.0.1')).toBe(false);
    const [first, second] = web.requests;
    expect(second.at).toBeLessThan(first.endAt!);
    expect(web.minIntervalByAddress().get('127.0.0.2')).toBeLessThan(200);

    // One after the other on two hosts of the address: never more than one in flight.
    web.reset();
    await get(web, 'slow-0.test', '/p/2', { address: SHARED_ADDRESS });
    await get(web, 'shared-0.test', '/');
    await Promise.all([get(web, 'shared-1.test', '/'), get(web, 'slow-0.test', '/p/3')]);
    expect(web.maxConcurrentByHost()).toEqual(
      new Map([
        ['slow-0.test', 1],
        ['shared-0.test', 1],
        ['shared-1.test', 1],
      ]),
    );
    expect(web.maxConcurrentByAddress().get('127.0.0.2')).toBe(1);
    expect(web.maxConcurrentByAddress().get('127.0.0.1')).toBe(1);
  });

  it('rejects clearly when 127.0.0.2 cannot take the port, and frees 127.0.0.1 again', async () => {
    const blocker = http.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, SHARED_ADDRESS, resolve));
    const port = (blocker.address() as AddressInfo).port;
    try {
      await expect(TestWeb.start({ hosts: 12, sharedIpHosts: 1, port })).rejects.toThrow(new RegExp(`cannot listen on 127\\.0\\.0\\.2:${port} \\(EADDRINUSE\\)`));
      const probe = http.createServer();
      await new Promise<void>((resolve, reject) => {
        probe.once('error', reject);
        probe.listen(port, '127.0.0.1', resolve);
      });
      await new Promise((r) => probe.close(r));
    } finally {
      await new Promise((r) => blocker.close(r));
    }
  });
});

describe('TestWeb freshness', () => {
  let web: TestWeb;

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 12, freshness: true });
  });
  afterAll(() => web.close());
  beforeEach(() => web.reset());

  it('adds fresh-0.test with /static, /news and /expires', async () => {
    expect(web.roles.fresh).toEqual(['fresh-0.test']);
    expect(web.extraSeeds()).toEqual([`${web.origin('fresh-0.test')}/`]);
    expect(web.expected.fresh.get('fresh-0.test')).toEqual(['/', '/static', '/news', '/expires'].map((p) => `${web.origin('fresh-0.test')}${p}`));
    const reached = await crawl(web, web.extraSeeds(), () => true);
    expect(portless(web, reached)).toEqual(portless(web, web.expected.fresh.get('fresh-0.test')!));
  });

  it('sends validators on 200 pages and answers a matching If-None-Match with an empty 304, logged as conditional', async () => {
    const first = await get(web, 'fresh-0.test', '/static');
    expect(first.status).toBe(200);
    const etag = first.headers.etag!;
    expect(etag).toMatch(/^"[0-9a-f]{16}"$/);
    expect(first.headers['cache-control']).toBe('no-cache');
    const lastModified = first.headers['last-modified']!;
    expect(Date.parse(lastModified)).toBeLessThan(Date.now());

    const again = await get(web, 'fresh-0.test', '/static', { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect(again.headers.etag).toBe(etag);
    expect(again.headers['last-modified']).toBe(lastModified);

    const weak = await get(web, 'fresh-0.test', '/static', { headers: { 'if-none-match': `"other", W/${etag}` } });
    expect(weak.status).toBe(304);
    const stale = await get(web, 'fresh-0.test', '/static', { headers: { 'if-none-match': '"other"', 'if-modified-since': lastModified } });
    expect(stale.status).toBe(200);
    expect(stale.body.equals(first.body)).toBe(true);

    expect(web.requests.map((r) => [r.status, r.conditional])).toEqual([
      [200, false],
      [304, true],
      [304, true],
      [200, true],
    ]);
  });

  it('answers If-Modified-Since not before Last-Modified with 304, an earlier one with 200', async () => {
    const first = await get(web, 'fresh-0.test', '/');
    const lastModified = Date.parse(first.headers['last-modified']!);
    const same = await get(web, 'fresh-0.test', '/', { headers: { 'if-modified-since': new Date(lastModified).toUTCString() } });
    expect(same.status).toBe(304);
    const later = await get(web, 'fresh-0.test', '/', { headers: { 'if-modified-since': new Date(lastModified + 86_400_000).toUTCString() } });
    expect(later.status).toBe(304);
    const earlier = await get(web, 'fresh-0.test', '/', { headers: { 'if-modified-since': new Date(lastModified - 1000).toUTCString() } });
    expect(earlier.status).toBe(200);
    const garbage = await get(web, 'fresh-0.test', '/', { headers: { 'if-modified-since': 'yesterday' } });
    expect(garbage.status).toBe(200);
    expect(web.requests.map((r) => r.conditional)).toEqual([false, true, true, true, true]);
  });

  it('changes /news on every request, so a conditional refetch always gets 200', async () => {
    const a = await get(web, 'fresh-0.test', '/news');
    const b = await get(web, 'fresh-0.test', '/news', { headers: { 'if-none-match': a.headers.etag!, 'if-modified-since': a.headers['last-modified']! } });
    const c = await get(web, 'fresh-0.test', '/news', { headers: { 'if-modified-since': b.headers['last-modified']! } });
    expect([a.status, b.status, c.status]).toEqual([200, 200, 200]);
    expect(a.body.equals(b.body)).toBe(false);
    expect(b.body.equals(c.body)).toBe(false);
    expect(new Set([a.headers.etag, b.headers.etag, c.headers.etag]).size).toBe(3);
    expect(Date.parse(b.headers['last-modified']!)).toBeGreaterThan(Date.parse(a.headers['last-modified']!));
    expect(b.body.toString()).toMatch(/Edition \d+/);
  });

  it('answers /expires with Expires an hour ahead and no Cache-Control: no-cache', async () => {
    const before = Date.now();
    const res = await get(web, 'fresh-0.test', '/expires');
    expect(res.status).toBe(200);
    const expires = Date.parse(res.headers.expires!);
    expect(expires).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + EXPIRES_AFTER_MS - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + EXPIRES_AFTER_MS);
    expect(res.headers['cache-control']).toBeUndefined();
    expect(res.headers.etag).toBeDefined();
  });

  it('puts validators on every 200 HTML page of the graph, not on robots.txt, errors or redirects', async () => {
    const home = await get(web, 'site-000.test', '/');
    expect(home.headers.etag).toMatch(/^"[0-9a-f]{16}"$/);
    expect(home.headers['cache-control']).toBe('no-cache');
    const again = await get(web, 'site-000.test', '/', { headers: { 'if-none-match': home.headers.etag! } });
    expect(again.status).toBe(304);
    expect(web.requests[1].status).toBe(304);
    // Same page, same date, every time.
    expect((await get(web, 'site-000.test', '/')).headers['last-modified']).toBe(home.headers['last-modified']);
    for (const path of ['/robots.txt', '/missing', '/error', '/old/1']) {
      const res = await get(web, 'site-000.test', path, { headers: { 'if-none-match': '*' } });
      expect(res.status).not.toBe(304);
      expect(res.headers.etag).toBeUndefined();
    }
  });

  it('stays off without the option: no validators, conditional requests answered in full', async () => {
    const plain = await TestWeb.start({ hosts: 12 });
    try {
      const res = await get(plain, 'site-000.test', '/', { headers: { 'if-none-match': '*' } });
      expect(res.status).toBe(200);
      expect(res.headers.etag).toBeUndefined();
      expect(res.headers['last-modified']).toBeUndefined();
      expect(res.headers['cache-control']).toBeUndefined();
      expect(plain.requests[0].conditional).toBe(true);
      expect((await get(plain, 'fresh-0.test', '/')).status).toBe(404);
    } finally {
      await plain.close();
    }
  });
});

describe('TestWeb defaults stay as they were', () => {
  it('keeps the default web: 1152 pages + 200 sitemaps + 5 sitemap-only pages reachable, 141 + 3 disallowed, no dedicated hosts, only 127.0.0.1', async () => {
    const web = await TestWeb.start({ hosts: 200, pagesPerHost: 5, seed: 1 });
    try {
      expect(web.expected.reachable.size).toBe(1152 + 200 + 5);
      expect(web.expected.sitemaps.size).toBe(200);
      expect([...web.expected.reachable].filter((u) => u.includes('/orphan/'))).toHaveLength(5);
      expect(web.expected.disallowed.size).toBe(141 + 3);
      expect(web.dedicatedHostNames).toEqual([]);
      expect(web.extraSeeds()).toEqual([]);
      expect(web.roles).toMatchObject({ rateLimited: [], slow: [], sharedIp: [], fresh: [] });
      expect(web.expected.rateLimited.size + web.expected.slow.size + web.expected.fresh.size + web.expected.sharedIp.length).toBe(0);
      const lines = web.hostsFile().trim().split('\n');
      expect(lines).toHaveLength(200);
      expect(lines.every((l) => l.startsWith('127.0.0.1 site-'))).toBe(true);
      const res = await get(web, 'site-000.test', '/');
      expect(res.status).toBe(200);
      expect(Object.keys(res.headers).sort()).toEqual(['connection', 'content-length', 'content-type', 'date']);
      expect(web.requests[0]).toMatchObject({ localAddress: '127.0.0.1', conditional: false, status: 200 });
      expect(web.requests[0].endAt).toBeGreaterThanOrEqual(web.requests[0].at);
      await expect(get(web, 'site-000.test', '/', { address: SHARED_ADDRESS })).rejects.toThrow(/ECONNREFUSED/);
      for (const name of ['limited-0.test', 'slow-0.test', 'shared-0.test']) expect((await get(web, name, '/')).status).toBe(404);
    } finally {
      await web.close();
    }
  });

  it('leaves the graph and its expectations alone when every new option is on', async () => {
    const options = { hosts: 200, pagesPerHost: 5, seed: 1 };
    const [plain, full] = await Promise.all([
      TestWeb.start(options),
      TestWeb.start({
        ...options,
        rateLimitedHosts: [{ status: 429, retryAfterSeconds: 1, failures: 3 }],
        slowHosts: [{ delayMs: 10 }],
        sharedIpHosts: 2,
        freshness: true,
      }),
    ]);
    try {
      expect(full.expected.reachable.size).toBe(1152 + 200 + 5);
      expect(full.expected.disallowed.size).toBe(141 + 3);
      expect(portless(full, full.expected.reachable)).toEqual(portless(plain, plain.expected.reachable));
      expect(portless(full, full.expected.disallowed)).toEqual(portless(plain, plain.expected.disallowed));
      expect(full.expected.duplicates.map((g) => portless(full, g))).toEqual(plain.expected.duplicates.map((g) => portless(plain, g)));
      expect(full.hostNames).toEqual(plain.hostNames);
      expect(portless(full, full.seeds())).toEqual(portless(plain, plain.seeds()));
      const { rateLimited, slow, sharedIp, fresh, ...graphRoles } = full.roles;
      expect({ ...plain.roles, rateLimited: [], slow: [], sharedIp: [], fresh: [] }).toEqual({ ...graphRoles, rateLimited: [], slow: [], sharedIp: [], fresh: [] });
      expect([rateLimited, slow, sharedIp, fresh]).toEqual([['limited-0.test'], ['slow-0.test'], ['shared-0.test', 'shared-1.test'], ['fresh-0.test']]);
      expect(full.extraSeeds().map((u) => new URL(u).hostname)).toEqual(['limited-0.test', 'slow-0.test', 'shared-0.test', 'fresh-0.test']);
      expect(full.hostsFile().startsWith(plain.hostsFile())).toBe(true);
      expect(full.hostsFile().slice(plain.hostsFile().length)).toBe(
        ['127.0.0.1 limited-0.test', '127.0.0.1 slow-0.test', '127.0.0.2 shared-0.test', '127.0.0.2 shared-1.test', '127.0.0.1 fresh-0.test', ''].join('\n'),
      );
      const body = async (web: TestWeb) => (await get(web, 'site-000.test', '/p/1')).body.toString().replaceAll(`:${web.port}`, '');
      expect(await body(full)).toBe(await body(plain));
    } finally {
      await Promise.all([plain.close(), full.close()]);
    }
  });

  it('rejects bad options for the dedicated hosts before taking a port', async () => {
    await expect(TestWeb.start({ hosts: 12, rateLimitedHosts: [{ status: 404 as 429, failures: 1 }] })).rejects.toThrow(/rateLimitedHosts\[0\]\.status=404/);
    await expect(TestWeb.start({ hosts: 12, rateLimitedHosts: [{ status: 429, failures: -1 }] })).rejects.toThrow(/failures=-1/);
    await expect(TestWeb.start({ hosts: 12, rateLimitedHosts: [{ status: 503, failures: 1, retryAfterSeconds: 1.5 }] })).rejects.toThrow(/retryAfterSeconds=1.5/);
    await expect(TestWeb.start({ hosts: 12, slowHosts: [{ delayMs: -5 }] })).rejects.toThrow(/slowHosts\[0\]\.delayMs=-5/);
    await expect(TestWeb.start({ hosts: 12, sharedIpHosts: 1.5 })).rejects.toThrow(/sharedIpHosts=1.5/);
  });

  it('closes promptly with a slow answer still held back', async () => {
    const web = await TestWeb.start({ hosts: 12, slowHosts: [{ delayMs: 20_000 }] });
    const pending = get(web, 'slow-0.test', '/').catch((err: Error) => err);
    // Until the request is in: on a loaded machine it may take more than a few milliseconds to arrive.
    const deadline = Date.now() + 5000;
    while (!web.maxConcurrentByHost().has('slow-0.test') && Date.now() < deadline) await sleep(10);
    expect(web.maxConcurrentByHost().get('slow-0.test')).toBe(1);
    const started = Date.now();
    await web.close();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(String(await pending)).toMatch(/socket hang up|ECONNRESET/);
    // The cut connection ends the record as soon as its close is noticed.
    await sleep(50);
    expect(web.requests[0].endAt).toBeDefined();
    expect(web.requests[0].endAt! - web.requests[0].at).toBeLessThan(5000);
  });
});

describe('TestWeb growing hubs', () => {
  let web: TestWeb;

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 12, growingHubs: { hubs: 2, clocks: 1, linkEveryMs: 200, initialItems: 2 } });
  });
  afterAll(() => web.close());

  it('serves hubs that gain an item link with time, clocks that change without new links, and logs the links served first', async () => {
    const home = await get(web, 'hubs-0.test', '/');
    expect(linksOf(home.body.toString(), `${web.origin('hubs-0.test')}/`).map((u) => new URL(u).pathname)).toEqual(['/hub/1', '/hub/2', '/clock/1']);
    const hubLinks = async () => linksOf((await get(web, 'hubs-0.test', '/hub/1')).body.toString(), `${web.origin('hubs-0.test')}/hub/1`).map((u) => new URL(u).pathname);
    const before = await hubLinks();
    expect(before.slice(0, 3)).toEqual(['/', `/item/1-${before.length - 1}`, `/item/1-${before.length - 2}`]);
    await new Promise((resolve) => setTimeout(resolve, 450));
    const after = await hubLinks();
    expect(after.length).toBeGreaterThanOrEqual(before.length + 2);
    const clocks = [await get(web, 'hubs-0.test', '/clock/1'), await get(web, 'hubs-0.test', '/clock/1')];
    expect(clocks[0].body).not.toEqual(clocks[1].body);
    expect((await get(web, 'hubs-0.test', `/item/2-${after.length - 1}`)).status).toBe(200);
    expect((await get(web, 'hubs-0.test', `/item/2-${after.length + 5}`)).status).toBe(404);
    expect(web.hubServes.map((s) => [s.path, s.newLinks])).toEqual([
      ['/', 3],
      ['/hub/1', before.length], // home and its items
      ['/hub/1', after.length - before.length],
      ['/clock/1', 0],
      ['/clock/1', 0],
      [`/item/2-${after.length - 1}`, 0], // home and its hub, both served before
      [`/item/2-${after.length + 5}`, 0],
    ]);
  });
});
