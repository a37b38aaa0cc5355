import { gunzipSync } from 'node:zlib';
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
    const req = http.request({ host: '127.0.0.1', port: web.port, path: target.pathname + target.search, headers: { host: target.host } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
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
      await sleep(300);
      await get(web, 'site-004.test', '/p/2');
      await get(web, 'site-005.test', '/');
      // The sleeps only bound the gaps from below (a loaded machine stretches them), so the smallest gap is
      // checked against the recorded times rather than against a wall-clock ceiling.
      const [first, second, third] = web.requests.filter((r) => r.host === 'site-004.test').map((r) => r.at);
      const gap = web.minIntervalMs('site-004.test');
      expect(gap).toBeGreaterThanOrEqual(50);
      expect(gap).toBe(Math.min(second - first, third - second));
      expect(web.minIntervalMs('site-005.test')).toBe(Infinity);
      expect(web.minIntervalMs()).toBe(gap);
      expect(web.minIntervalByHost()).toEqual(
        new Map([
          ['site-004.test', gap],
          ['site-005.test', Infinity],
        ]),
      );
      await get(web, 'site-005.test', '/p/1');
      expect(web.minIntervalMs()).toBe(Math.min(gap, web.minIntervalMs('site-005.test')));
      expect(web.minIntervalMs('site-005.test')).toBeLessThan(Infinity);
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
      // Sitemaps a host's robots.txt announces (else /sitemap.xml), met when robots.txt is read.
      const announced: string[] = [];
      const sitemapUrls = new Set<string>();
      const allowed = async (url: string) => {
        const host = hostOf(url);
        if (!robots.has(host)) {
          robots.set(
            host,
            get(web, host, '/robots.txt').then((res) => {
              if (res.status >= 500) return () => false;
              const robotsUrl = new URL('/robots.txt', url).href;
              const parsed = res.status >= 400 ? null : robotsParser(robotsUrl, res.body.toString());
              const listed = parsed?.getSitemaps() ?? [];
              for (const s of listed.length ? listed : [new URL('/sitemap.xml', url).href]) {
                announced.push(s);
                sitemapUrls.add(s);
              }
              return parsed ? (u: string) => parsed.isAllowed(u, 'politecrawler') === true : () => true;
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
            if (sitemapUrls.has(url)) {
              const xml = (res.body[0] === 0x1f ? gunzipSync(res.body) : res.body).toString();
              const locs = [...xml.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) => m[1]);
              if (xml.includes('<sitemapindex')) locs.forEach((l) => sitemapUrls.add(l));
              return locs;
            }
            return linksOf(res.body.toString('latin1'), url);
          }),
        );
        frontier = [...new Set([...found.flat(), ...announced.splice(0)])].filter((u) => !seen.has(u));
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

describe('TestWeb images', () => {
  let web: TestWeb;
  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 20, seed: 7 });
  });
  afterAll(() => web.close());

  it('shows PNGs with <img> on three pages, and serves them as image/png', async () => {
    const images = web.images();
    expect(images.map((i) => new URL(i.url).pathname).sort()).toEqual(
      [
        '/images/logo.png',
        '/images/photo.png',
        '/private/hidden.png',
        '/images/logo-copy.png',
        '/images/icon.png',
        '/images/deep.png',
        '/images/broken.png',
        '/images/truncated.png',
        '/img/banner.png',
      ].sort(),
    );
    const home = (await get(web, web.roles.images.host, '/')).body.toString();
    expect(home).toContain('<img src="/images/logo.png" alt="">');
    for (const image of images) {
      const res = await fetchVia(web, image.url);
      expect([res.status, res.headers['content-type'], res.body.equals(image.body)]).toEqual([200, 'image/png', true]);
    }
    const [logo, copy] = ['/images/logo.png', '/images/logo-copy.png'].map((p) => images.find((i) => i.url.endsWith(p))!);
    expect(logo.body.equals(copy.body)).toBe(true);
  });

  it('leaves images out of what a plain crawl fetches; a crawler with the PNG plugin fetches the allowed PNGs too', () => {
    const plain = web.expected.reachable;
    expect([...plain].filter((u) => /\.(png|jpe?g)$/.test(u))).toEqual([]);
    const withPng = web.expectedWithPlugins(['png']);
    const extra = [...withPng.reachable].filter((u) => !plain.has(u));
    expect(extra.sort()).toEqual(
      web
        .images()
        .map((i) => i.url)
        .filter((u) => !u.includes('/private/'))
        .sort(),
    );
    expect([...withPng.disallowed].filter((u) => !web.expected.disallowed.has(u))).toEqual([web.images().find((i) => i.url.includes('/private/'))!.url]);
    expect(withPng.duplicates.length).toBe(web.expected.duplicates.length + 1);
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

describe('TestWeb spider traps', () => {
  let web: TestWeb;
  const CAL = 'calendar-0.test';
  const LOOP = 'loop-0.test';
  /** The page's links as served, and as trapLinks() says they are: they must agree. */
  const page = async (host: string, path: string) => {
    const url = new URL(path, web.origin(host)).href;
    const res = await get(web, host, path);
    const links = res.status === 200 ? linksOf(res.body.toString(), url) : [];
    if (res.status === 200) expect(web.trapLinks(url)).toEqual(links);
    else expect(web.trapLinks(url)).toBeNull();
    return { status: res.status, links: links.map((l) => l.slice(web.origin(host).length)), body: res.body.toString() };
  };

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 12, traps: true });
  });
  afterAll(() => web.close());

  it('adds the trap hosts only when asked: in the roles, the extra seeds and the hosts file', async () => {
    expect(web.roles.calendar).toEqual([CAL]);
    expect(web.roles.loop).toEqual([LOOP]);
    expect(web.extraSeeds()).toEqual([`${web.origin(CAL)}/`, `${web.origin(LOOP)}/`]);
    expect(web.hostsFile()).toContain(`127.0.0.1 ${CAL}\n127.0.0.1 ${LOOP}\n`);
    const plain = await TestWeb.start({ hosts: 12 });
    try {
      expect([plain.roles.calendar, plain.roles.loop, plain.extraSeeds()]).toEqual([[], [], []]);
    } finally {
      await plain.close();
    }
  });

  it('allows everything in robots.txt', async () => {
    for (const host of [CAL, LOOP]) {
      const res = await get(web, host, '/robots.txt');
      expect([res.status, res.body.toString()]).toEqual([200, 'User-agent: *\nDisallow:\n']);
    }
  });

  describe('calendar-0.test', () => {
    it('links its home page to this month (UTC)', async () => {
      const now = new Date();
      const month = `${now.getUTCFullYear()}/${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
      expect((await page(CAL, '/')).links).toEqual([`/calendar/${month}`]);
    });

    it('links a month to the months before and after, across years, and to its first day', async () => {
      expect((await page(CAL, '/calendar/2031/12')).links).toEqual(['/calendar/2031/11', '/calendar/2032/01', '/calendar?date=2031-12-01&view=day']);
      expect((await page(CAL, '/calendar/2031/01')).links).toEqual(['/calendar/2030/12', '/calendar/2031/02', '/calendar?date=2031-01-01&view=day']);
      expect((await page(CAL, '/calendar/0001/01')).links).toEqual(['/calendar/0001/02', '/calendar?date=0001-01-01&view=day']);
    });

    it('links a day to the days before and after and to its month, whatever the order of the parameters', async () => {
      const links = ['/calendar?date=2031-12-30&view=day', '/calendar?date=2032-01-01&view=day', '/calendar/2031/12'];
      expect((await page(CAL, '/calendar?date=2031-12-31&view=day')).links).toEqual(links);
      expect((await page(CAL, '/calendar?view=day&date=2031-12-31')).links).toEqual(links);
      expect((await page(CAL, '/calendar?date=2032-03-01&view=day')).links[0]).toBe('/calendar?date=2032-02-29&view=day');
    });

    it('goes on without end: fifty months back and forth, every one a different page', async () => {
      const bodies = new Set<string>();
      for (const [start, step] of [
        ['/calendar/2000/01', 0],
        ['/calendar/2000/01', 1],
      ] as const) {
        let path: string = start;
        for (let i = 0; i < 25; i++) {
          const p = await page(CAL, path);
          expect(p.status).toBe(200);
          bodies.add(p.body.replace(path, ''));
          path = p.links[step];
        }
      }
      expect(bodies.size).toBe(49); // 2000/01 twice
    });

    it('answers 404 for what is no month or day', async () => {
      for (const path of [
        '/calendar/2031/13',
        '/calendar/2031/00',
        '/calendar/31/01',
        '/calendar/2031/05/01',
        '/calendar?date=2031-02-30&view=day',
        '/calendar?date=2031-05-01',
        '/calendar?date=2031-05-01&view=day&x=1',
        '/other',
      ]) {
        expect([path, (await page(CAL, path)).status]).toEqual([path, 404]);
      }
    });
  });

  describe('loop-0.test', () => {
    it('links / and every a/b path relatively to a/ and b/, and to the ordinary pages', async () => {
      const home = await page(LOOP, '/');
      expect(home.links).toEqual(['/a/', '/b/', '/p/1', '/p/2']);
      expect(home.body).toContain('<a href="a/">');
      expect((await page(LOOP, '/a/b/a/b/a/b/')).links).toEqual(['/a/b/a/b/a/b/a/', '/a/b/a/b/a/b/b/', '/p/1', '/p/2']);
      expect((await page(LOOP, '/a/a/a/a/')).status).toBe(200);
    });

    it('serves the two ordinary pages, and 404 for anything else', async () => {
      expect((await page(LOOP, '/p/1')).links).toEqual(['/', '/p/2']);
      expect((await page(LOOP, '/p/2')).links).toEqual(['/', '/p/1']);
      for (const path of ['/a', '/c/', '/a/c/', '/p/3', '/a/?x=1']) expect([path, (await page(LOOP, path)).status]).toEqual([path, 404]);
    });
  });
});
