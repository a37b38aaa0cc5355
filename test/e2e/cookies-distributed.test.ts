import { writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { closeServer, listenOnLoopback } from '../support/local-server';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { DOWNLOADER_APART } from '../support/service-processes';
import { TestWebCluster } from '../support/test-web-cluster';

/** The light stages in one process, two downloaders of their own, the control plane: the jar must be the state store's, not a process's. */
const SERVICES = [...DOWNLOADER_APART, 'downloader'];
const SESSION = 'distributed-session-5be1';
const SHOP_HOSTS = Array.from({ length: 8 }, (_, i) => `s${i + 1}.shop.test`);

interface Heard {
  host: string;
  path: string;
  cookie?: string;
}

const page = (res: ServerResponse, links: string[], headers: Record<string, string | string[]> = {}) =>
  res.writeHead(200, { 'content-type': 'text/html', ...headers }).end(`<!doctype html><title>page</title>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}`);

/**
 * Cookies in the distributed shape, every service its own process, two downloaders: www.shop.test logs the
 * crawler in (a cookie for all of shop.test, then a redirect) and links to eight more hosts of shop.test,
 * which the hash ring spreads over both downloaders; ads.test sets its own; members.test answers only the
 * session seeded from SITE_SETTINGS_FILE (its value from the environment of every service).
 */
describe('distributed crawl with cookies', () => {
  const heard: Heard[] = [];
  let server: Server;
  let port: number;
  let cluster: TestWebCluster;
  let status: any;
  let listed: any;
  let handled: number[];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const host = (req.headers.host ?? '').replace(/:\d+$/, '');
      const path = req.url ?? '/';
      const cookie = req.headers.cookie ?? '';
      heard.push({ host, path, cookie: req.headers.cookie });
      if (path === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
      if (host === 'www.shop.test' && path === '/')
        return void res.writeHead(302, { location: '/home', 'set-cookie': ['sid=42; Domain=shop.test; Path=/', 'steal=1; Domain=ads.test'] }).end();
      if (host === 'www.shop.test' && path === '/home')
        return page(res, cookie.includes('sid=42') ? [...SHOP_HOSTS.map((h) => `http://${h}:${port}/`), `http://ads.test:${port}/`] : []);
      if (SHOP_HOSTS.includes(host) && path === '/') return page(res, []);
      if (host === 'ads.test' && path === '/') return page(res, ['/b'], { 'set-cookie': 'track=1' });
      if (host === 'ads.test' && path === '/b') return page(res, []);
      if (host === 'members.test' && path === '/')
        return cookie === `session=${SESSION}` ? page(res, ['/inside']) : void res.writeHead(302, { location: '/login' }).end();
      if (host === 'members.test' && path === '/inside') return page(res, []);
      if (host === 'members.test' && path === '/login') return page(res, []);
      res.writeHead(404).end();
    });
    port = await listenOnLoopback(server);
    const file = join(tempDir('cookies-distributed-'), 'sites.yaml');
    writeFileSync(file, 'sites:\n  members.test:\n    cookies:\n      - name: session\n        valueFromEnv: MEMBERS_SESSION\n');
    const hosts = ['www.shop.test', ...SHOP_HOSTS, 'ads.test', 'members.test'];
    cluster = await new TestWebCluster({ hostsFile: () => `127.0.0.1 ${hosts.join(' ')}\n` }).start({
      env: { FRONTIER_MIN_DELAY_MS: '50', SITEMAP_MODE: 'off', SITE_SETTINGS_FILE: file, MEMBERS_SESSION: SESSION },
      services: SERVICES,
      startTimeoutMs: 90_000,
    });
    // Both downloaders on the ring, as the frontier sees it, before the first URL is dispatched: it re-reads the
    // ring every second, and this whole crawl can be over in one (then every host went to the first downloader).
    await cluster.until((s) => s.downloaders === 2, 30_000, 100);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await cluster.seed([`http://www.shop.test:${port}/`, `http://members.test:${port}/`])).toBe(201);
    status = await cluster.until((s) => s.complete, 120_000, 500);
    listed = await (await fetch(`${cluster.control}/sites?host=members.test`)).json();
    // Fetch jobs each downloader handled, from its own metrics.
    handled = await Promise.all(
      cluster.services
        .filter((s) => s.name === 'downloader')
        .map(async (s) => {
          const metrics = await (await fetch(`http://127.0.0.1:${s.port}/metrics`)).text();
          return [...metrics.matchAll(/^crawler_queue_jobs_handled_total\{[^}]*\} (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
        }),
    );
  }, 240_000);

  afterAll(async () => {
    await cluster?.close();
    await closeServer(server);
    removeTempDirs();
  });

  const at = (host: string, path: string) => heard.find((h) => h.host === host && h.path === path);

  it('sends the cookie one downloader was given to every host of the site, whichever downloader fetches it', () => {
    expect(status.complete).toBe(true);
    expect(handled).toHaveLength(2);
    expect(handled.every((jobs) => jobs > 0)).toBe(true);
    expect(at('www.shop.test', '/')?.cookie).toBeUndefined();
    expect(at('www.shop.test', '/home')?.cookie).toBe('sid=42');
    for (const host of SHOP_HOSTS) expect(at(host, '/')?.cookie).toBe('sid=42');
  });

  it('never sends a cookie to another site', () => {
    expect(at('ads.test', '/')?.cookie).toBeUndefined();
    expect(at('ads.test', '/b')?.cookie).toBe('track=1');
    expect(heard.filter((h) => h.host.endsWith('shop.test')).every((h) => !/track|steal/.test(h.cookie ?? ''))).toBe(true);
    expect(heard.filter((h) => h.host === 'members.test').every((h) => !/sid|track|steal/.test(h.cookie ?? ''))).toBe(true);
    expect(heard.filter((h) => h.path === '/robots.txt').every((h) => h.cookie === undefined)).toBe(true);
  });

  it('logs in to members.test with the seeded session, which the control plane lists hidden', () => {
    expect(at('members.test', '/inside')?.cookie).toBe(`session=${SESSION}`);
    expect(at('members.test', '/login')).toBeUndefined();
    expect(listed).toEqual({ host: 'members.test', settings: { cookies: [{ name: 'session', value: '(hidden)' }] }, patterns: ['members.test'] });
  });
});
