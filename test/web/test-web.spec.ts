import http from 'node:http';
import { Parser } from 'htmlparser2';
import * as iconv from 'iconv-lite';
import robotsParser from 'robots-parser';
import { normaliseUrl } from './expected-crawl';
import { TestWeb } from './test-web';

interface Fetched {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** GET through 127.0.0.1:port with the Host header naming the virtual host, like a crawler with a hosts map. */
function fetchVia(web: TestWeb, url: string): Promise<Fetched> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: web.port, path: target.pathname + target.search, headers: { host: target.host } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function get(web: TestWeb, host: string, path: string): Promise<Fetched> {
  return fetchVia(web, new URL(path, web.origin(host)).href);
}

/** Links in an HTML page, resolved against its `<base href>` or its URL, fragments dropped. */
function linksOf(html: string, pageUrl: string): string[] {
  let base: string | undefined;
  const hrefs: string[] = [];
  const parser = new Parser({
    onopentag(name, attrs) {
      if (name === 'base' && base === undefined && attrs.href !== undefined) base = attrs.href;
      if (name === 'a' && attrs.href !== undefined) hrefs.push(attrs.href);
    },
  });
  parser.write(html);
  parser.end();
  const baseUrl = new URL(base ?? pageUrl, pageUrl);
  return hrefs.map((h) => normaliseUrl(h, baseUrl));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('TestWeb', () => {
  let web: TestWeb;

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 20, seed: 7 });
  });
  afterAll(() => web.close());
  beforeEach(() => web.reset());

  describe('robots.txt', () => {
    it('disallows /private/ on an ordinary host', async () => {
      const res = await get(web, web.roles.seed, '/robots.txt');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.body.toString()).toContain('User-agent: *\nDisallow: /private/\n');
      expect(res.body.toString()).not.toContain('Crawl-delay');
    });

    it('announces Crawl-delay: 1 on the crawl-delay hosts', async () => {
      expect(web.roles.crawlDelay).toHaveLength(3);
      for (const host of web.roles.crawlDelay) {
        const res = await get(web, host, '/robots.txt');
        expect(res.body.toString()).toMatch(/^Crawl-delay: 1$/m);
        expect(web.expected.crawlDelay.get(host)).toBe(1);
      }
      expect(web.expected.crawlDelay.size).toBe(3);
    });

    it('answers 404, 500 and Disallow: / on the special hosts', async () => {
      for (const host of web.roles.robotsMissing) expect((await get(web, host, '/robots.txt')).status).toBe(404);
      for (const host of web.roles.robotsError) expect((await get(web, host, '/robots.txt')).status).toBe(500);
      const all = await get(web, web.roles.disallowAll, '/robots.txt');
      expect(all.status).toBe(200);
      expect(all.body.toString()).toBe('User-agent: *\nDisallow: /\n');
    });
  });

  describe('pages', () => {
    it('serves an HTML home page with a title and 3 to 6 links', async () => {
      const [seed] = web.seeds();
      expect(seed).toBe(`http://site-000.test:${web.port}/`);
      const res = await fetchVia(web, seed);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      const html = res.body.toString();
      expect(html).toMatch(/<title>[^<]+\| site-000\.test<\/title>/);
      const links = linksOf(html, seed);
      expect(links.length).toBeGreaterThanOrEqual(3);
      expect(links.length).toBeLessThanOrEqual(6);
      expect(links).toContain(`${web.origin('site-001.test')}/`);
      expect(res.body.length).toBeGreaterThan(200);
      expect(res.body.length).toBeLessThan(8000);
    });

    it('uses <base href> on one home page', async () => {
      const res = await get(web, web.roles.baseHref, '/');
      expect(res.body.toString()).toContain('<base href="/p/">');
    });

    it('redirects /old/K to /p/K with 301 and /go across hosts with 302', async () => {
      const old = await get(web, 'site-000.test', '/old/2');
      expect(old.status).toBe(301);
      expect(old.headers.location).toBe('/p/2');

      const { from, to } = web.roles.crossRedirect;
      const go = await get(web, from, '/go');
      expect(go.status).toBe(302);
      expect(go.headers.location).toBe(`${web.origin(to)}/landing`);
      const landing = await fetchVia(web, go.headers.location!);
      expect(landing.status).toBe(200);
      expect(web.expected.reachable).toContain(`${web.origin(from)}/go`);
      expect(web.expected.reachable).toContain(`${web.origin(to)}/landing`);
    });

    it('answers 404 for /missing, unknown paths and unknown hosts, 500 for /error', async () => {
      const missing = await get(web, 'site-001.test', '/missing');
      expect(missing.status).toBe(404);
      expect(missing.headers['content-type']).toBe('text/html; charset=utf-8');
      expect((await get(web, 'site-001.test', '/no/such/page')).status).toBe(404);
      expect((await get(web, 'site-001.test', '/p/999')).status).toBe(404);
      expect((await get(web, 'nowhere.test', '/')).status).toBe(404);
      expect((await get(web, 'site-001.test', '/error')).status).toBe(500);
    });

    it('serves the windows-1251 page', async () => {
      const { url, charset, text } = web.expected.charsetPage;
      expect(url).toBe(`${web.origin(web.roles.charset)}/cp1251`);
      const res = await fetchVia(web, url);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=windows-1251');
      expect(iconv.decode(res.body, charset)).toContain(text);
      expect(res.body.toString('utf8')).not.toContain(text);
      expect(web.expected.reachable).toContain(url);
    });
  });

  describe('request log', () => {
    it('records host, path, time and status of every request', async () => {
      const before = performance.timeOrigin + performance.now();
      await get(web, 'site-002.test', '/');
      await get(web, 'site-002.test', '/missing');
      await fetchVia(web, `http://SITE-003.test:${web.port}/p/1`);
      expect(web.requests.map(({ host, path, status }) => ({ host, path, status }))).toEqual([
        { host: 'site-002.test', path: '/', status: 200 },
        { host: 'site-002.test', path: '/missing', status: 404 },
        { host: 'site-003.test', path: '/p/1', status: 200 },
      ]);
      expect(web.requests[0].at).toBeGreaterThanOrEqual(before);
      expect(web.requests[1].at).toBeGreaterThanOrEqual(web.requests[0].at);
      expect(web.requestCount()).toBe(3);
      expect(web.requestCount('site-002.test')).toBe(2);
      expect(web.requestCount('site-004.test')).toBe(0);
      expect(web.requestCountByUrl().get(`${web.origin('site-003.test')}/p/1`)).toBe(1);
      web.reset();
      expect(web.requests).toHaveLength(0);
    });

    it('measures the smallest gap between requests to one host', async () => {
      expect(web.minIntervalMs()).toBe(Infinity);
      await get(web, 'site-004.test', '/');
      await sleep(60);
      await get(web, 'site-004.test', '/p/1');
      await sleep(120);
      await get(web, 'site-004.test', '/p/2');
      await get(web, 'site-005.test', '/');
      const gap = web.minIntervalMs('site-004.test');
      expect(gap).toBeGreaterThanOrEqual(50);
      expect(gap).toBeLessThan(120);
      expect(web.minIntervalMs('site-005.test')).toBe(Infinity);
      expect(web.minIntervalMs()).toBe(gap);
      expect(web.minIntervalByHost()).toEqual(
        new Map([
          ['site-004.test', gap],
          ['site-005.test', Infinity],
        ]),
      );
      await get(web, 'site-005.test', '/p/1');
      expect(web.minIntervalMs()).toBe(web.minIntervalMs('site-005.test'));
      expect(web.minIntervalMs()).toBeLessThan(gap);
    });
  });

  describe('expected', () => {
    const hostOf = (url: string) => new URL(url).hostname;

    it('names only hosts of the hosts file, as normalised absolute URLs', () => {
      const mapped = new Map(
        web
          .hostsFile()
          .trim()
          .split('\n')
          .map((line) => line.split(/\s+/) as [string, string])
          .map(([ip, name]) => [name, ip]),
      );
      expect(mapped.size).toBe(20);
      for (const url of [...web.expected.reachable, ...web.expected.disallowed]) {
        expect(mapped.get(hostOf(url))).toBe('127.0.0.1');
        expect(new URL(url).href).toBe(url);
        expect(url).not.toContain('#');
      }
    });

    it('reaches every host except the robots-500 and disallow-all ones', () => {
      const blocked = new Set([...web.roles.robotsError, web.roles.disallowAll]);
      const reached = new Set([...web.expected.reachable].map(hostOf));
      for (const host of web.hostNames) expect(reached.has(host)).toBe(!blocked.has(host));
      const disallowedHosts = new Set([...web.expected.disallowed].map(hostOf));
      for (const host of blocked) expect(disallowedHosts.has(host)).toBe(true);
    });

    it('never lists a URL as both reachable and disallowed', () => {
      for (const url of web.expected.disallowed) expect(web.expected.reachable.has(url)).toBe(false);
      expect(web.expected.disallowed.size).toBeGreaterThan(0);
      expect([...web.expected.disallowed].some((u) => new URL(u).pathname.startsWith('/private/'))).toBe(true);
      expect([...web.expected.reachable].some((u) => new URL(u).pathname === '/missing')).toBe(true);
      expect([...web.expected.reachable].some((u) => new URL(u).pathname === '/error')).toBe(true);
      expect([...web.expected.reachable].some((u) => new URL(u).pathname.startsWith('/old/'))).toBe(true);
    });

    it('agrees with robots-parser reading the served robots.txt files', async () => {
      const robots = new Map<string, { status: number; text: string }>();
      for (const host of web.hostNames) {
        const res = await get(web, host, '/robots.txt');
        robots.set(host, { status: res.status, text: res.body.toString() });
      }
      const allowed = (url: string) => {
        const { status, text } = robots.get(hostOf(url))!;
        if (status === 404) return true;
        if (status >= 500) return false;
        return robotsParser(new URL('/robots.txt', url).href, text).isAllowed(url, 'politecrawler') === true;
      };
      for (const url of web.expected.reachable) expect(allowed(url)).toBe(true);
      for (const url of web.expected.disallowed) expect(allowed(url)).toBe(false);
    });

    it('lists duplicate groups whose bodies really are byte-identical', async () => {
      expect(web.expected.duplicates).toHaveLength(web.roles.copy.length);
      for (const group of web.expected.duplicates) {
        expect(group).toHaveLength(2);
        const [first, ...rest] = await Promise.all(group.map((url) => fetchVia(web, url)));
        expect(first.status).toBe(200);
        for (const other of rest) expect(other.body.equals(first.body)).toBe(true);
        for (const url of group) expect(web.expected.reachable).toContain(url);
      }
    });

    it('is exactly what a small robots-obeying crawler fetches over HTTP', async () => {
      const robots = new Map<string, Promise<(url: string) => boolean>>();
      const allowed = async (url: string) => {
        const host = hostOf(url);
        if (!robots.has(host)) {
          robots.set(
            host,
            get(web, host, '/robots.txt').then((res) => {
              if (res.status >= 500) return () => false;
              if (res.status >= 400) return () => true;
              const parsed = robotsParser(new URL('/robots.txt', url).href, res.body.toString());
              return (u: string) => parsed.isAllowed(u, 'politecrawler') === true;
            }),
          );
        }
        return (await robots.get(host)!)(url);
      };
      const fetched = new Set<string>();
      const refused = new Set<string>();
      const seen = new Set(web.seeds());
      let frontier = [...seen];
      while (frontier.length > 0) {
        const found = await Promise.all(
          frontier.map(async (url): Promise<string[]> => {
            if (!(await allowed(url))) {
              refused.add(url);
              return [];
            }
            fetched.add(url);
            const res = await fetchVia(web, url);
            if (res.status >= 300 && res.status < 400) return [normaliseUrl(res.headers.location!, url)];
            if (res.status !== 200) return [];
            return linksOf(res.body.toString('latin1'), url);
          }),
        );
        frontier = [...new Set(found.flat())].filter((u) => !seen.has(u));
        frontier.forEach((u) => seen.add(u));
      }
      expect(fetched).toEqual(web.expected.reachable);
      expect(refused).toEqual(web.expected.disallowed);
      const counts = web.requestCountByUrl();
      for (const url of web.expected.reachable) expect(counts.get(url)).toBe(1);
      expect(web.requests.every((r) => !r.path.startsWith('/private/') || web.roles.robotsMissing.includes(r.host))).toBe(true);
    });
  });
});

describe('TestWeb defaults and determinism', () => {
  it('builds the default web of 200 hosts with every role present', async () => {
    const web = await TestWeb.start();
    try {
      const { expected, roles } = web;
      expect(web.hostNames).toHaveLength(200);
      expect(web.hostNames[0]).toBe('site-000.test');
      expect(web.hostNames[199]).toBe('site-199.test');
      expect(roles.robotsError).toHaveLength(2);
      expect(roles.robotsMissing).toHaveLength(4);
      expect(roles.crawlDelay).toHaveLength(3);
      expect(expected.duplicates.length).toBeGreaterThanOrEqual(2);
      const blocked = new Set([...roles.robotsError, roles.disallowAll]);
      const reached = new Set([...expected.reachable].map((u) => new URL(u).hostname));
      expect(reached.size).toBe(200 - blocked.size);
      expect(expected.reachable.size).toBeGreaterThan(200 * 5 - blocked.size * 5);
    } finally {
      await web.close();
    }
  });

  it('gives the same web for the same seed and another for another seed', async () => {
    const webs = await Promise.all([TestWeb.start({ hosts: 30 }), TestWeb.start({ hosts: 30 }), TestWeb.start({ hosts: 30, seed: 2 })]);
    try {
      const portless = (web: TestWeb) => [...web.expected.reachable].map((u) => u.replace(`:${web.port}/`, '/')).sort();
      const body = async (web: TestWeb) => (await get(web, 'site-000.test', '/')).body.toString().replaceAll(`:${web.port}`, '');
      expect(portless(webs[0])).toEqual(portless(webs[1]));
      expect(await body(webs[0])).toBe(await body(webs[1]));
      expect(await body(webs[0])).not.toBe(await body(webs[2]));
    } finally {
      await Promise.all(webs.map((w) => w.close()));
    }
  });

  it('rejects options it cannot build a web from', async () => {
    await expect(TestWeb.start({ hosts: 5 })).rejects.toThrow(/hosts=5/);
    await expect(TestWeb.start({ pagesPerHost: 1 })).rejects.toThrow(/pagesPerHost=1/);
    await expect(TestWeb.start({ hosts: 20, crawlDelayHosts: 50 })).rejects.toThrow(/crawlDelayHosts=50/);
  });
});
