import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { closeServer, listenOnLoopback } from '../support/local-server';
import { runCrawlCli } from '../support/run-crawl-cli';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { crawlTestWeb, FOLLOW_EVERY_LINK, IN_MEMORY_TEST_ENV, readFetchLog } from '../support/test-web-crawl';

const DOC = readFileSync(join(__dirname, '../../docs/crawl-config.md'), 'utf8');

/** The fenced block after `<!-- example:NAME -->` in docs/crawl-config.md. */
function example(name: string): string {
  const at = DOC.indexOf(`<!-- example:${name} -->`);
  if (at < 0) throw new Error(`docs/crawl-config.md has no example ${name}`);
  return /```\w*\n([\s\S]*?)```/.exec(DOC.slice(at))![1];
}

/** The arguments of the block's `npm run crawl -- …` line, split as a shell splits them (single quotes only). */
function crawlArgs(block: string): string[] {
  const line = block.split('\n').find((l) => l.startsWith('npm run crawl'))!;
  const args = [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]);
  return args.slice(args.indexOf('--') + 1);
}

interface Heard {
  host: string;
  path: string;
  cookie?: string;
}

/** One loopback server for every test host: each host's handler by name, and every request heard with its Cookie header. */
function web(heard: Heard[], hosts: Record<string, (req: IncomingMessage, res: ServerResponse) => void>): Server {
  return createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    heard.push({ host, path: req.url ?? '/', cookie: req.headers.cookie });
    if (req.url === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain', 'set-cookie': 'robots=1' }).end('User-agent: *\nAllow: /\n');
    const handler = hosts[host];
    if (!handler) return void res.writeHead(404).end();
    handler(req, res);
  });
}

const page = (res: ServerResponse, links: string[], headers: Record<string, string | string[]> = {}) =>
  res.writeHead(200, { 'content-type': 'text/html', ...headers }).end(`<!doctype html><title>page</title>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}`);

const SESSION = 'members-only-7f3a9c';

afterAll(removeTempDirs);

/**
 * "A logged-in crawl" of docs/crawl-config.md, run as written (the seed pointed at a local forum): the forum
 * answers its members' pages only to the seeded session, and sends anyone else to its login page.
 */
describe('embedded crawl: a logged-in crawl (docs/crawl-config.md)', () => {
  const heard: Heard[] = [];
  let server: Server;
  let port: number;

  beforeAll(async () => {
    server = web(heard, {
      'forum.example.com': (req, res) => {
        const path = req.url ?? '/';
        if (path === '/login') return page(res, []);
        if (!(req.headers.cookie ?? '').split('; ').includes(`session=${SESSION}`)) return void res.writeHead(302, { location: '/login' }).end();
        // The forum sets a token of its own on the way: the jar keeps it and sends it back.
        if (path === '/members/') return page(res, ['/members/alice', '/members/bob'], { 'set-cookie': 'csrf=t0k; Path=/members' });
        if (path === '/members/alice' || path === '/members/bob') return page(res, ['/members/']);
        res.writeHead(404).end();
      },
    });
    port = await listenOnLoopback(server);
  });

  afterAll(() => closeServer(server));

  it('fetches the members’ pages with the seeded session, and never shows its value', async () => {
    const dir = tempDir('cookies-logged-in-');
    writeFileSync(join(dir, 'logged-in.yaml'), example('logged-in-settings'));
    const exported = /^export FORUM_SESSION=/m.test(example('logged-in-crawl'));
    expect(exported).toBe(true);
    const args = crawlArgs(example('logged-in-crawl')).map((a) =>
      a === 'logged-in.yaml' ? join(dir, 'logged-in.yaml') : a === 'https://forum.example.com/members/' ? `http://forum.example.com:${port}/members/` : a,
    );
    await crawlTestWeb({ hostsFile: () => '127.0.0.1 forum.example.com\n' }, dir, {
      args,
      delaySeconds: 0.05,
      env: { FORUM_SESSION: SESSION },
      timeoutMs: 60_000,
    });
    // The sitemap the crawl looks for at /sitemap.xml is no page of the forum's (a 404).
    const pages = heard.filter((h) => h.path !== '/robots.txt' && h.path !== '/sitemap.xml');
    expect(pages.map((h) => h.path).sort()).toEqual(['/members/', '/members/alice', '/members/bob']);
    expect(pages[0]).toEqual({ host: 'forum.example.com', path: '/members/', cookie: `session=${SESSION}; lang=en` });
    for (const member of pages.slice(1)) expect(member.cookie).toBe(`csrf=t0k; session=${SESSION}; lang=en`);
    expect(heard.find((h) => h.path === '/login')).toBeUndefined();
    expect(heard.find((h) => h.path === '/robots.txt')?.cookie).toBeUndefined();
    const members = readFetchLog(dir).filter((entry) => new URL(entry.url).pathname.startsWith('/members/'));
    expect(members.map((entry) => entry.status)).toEqual([200, 200, 200]);
    // Nothing the crawl wrote or said holds the session.
    for (const file of readdirSync(dir, { recursive: true }).map(String)) {
      if (/\.(jsonl|log|json|txt)$/.test(file)) expect(readFileSync(join(dir, file), 'utf8')).not.toContain(SESSION);
    }
  }, 90_000);

  it('refuses the settings before crawling when the session is not in the environment, naming the line and field', async () => {
    const dir = tempDir('cookies-no-session-');
    writeFileSync(join(dir, 'logged-in.yaml'), example('logged-in-settings'));
    const before = heard.length;
    const { FORUM_SESSION: _unset, ...env } = process.env;
    const outcome = await runCrawlCli(['--site-settings', join(dir, 'logged-in.yaml'), `http://forum.example.com:${port}/members/`, '--out', dir], {
      env: { ...env, ...IN_MEMORY_TEST_ENV },
      timeoutMs: 50_000,
    });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain(
      `${join(dir, 'logged-in.yaml')}:7:23: sites."forum.example.com".cookies.0.valueFromEnv: FORUM_SESSION is not set (it must be, in every process that reads this file)`,
    );
    expect(heard.length).toBe(before);
  }, 60_000);
});

/**
 * Two sites on loopback: shop.test logs the crawler in on its first page (a session cookie, then a redirect)
 * and tries to set cookies for ads.test and for the whole of .test; ads.test sets its own. Neither site ever
 * gets a cookie of the other's.
 */
describe('embedded crawl: one cookie jar per site', () => {
  const heard: Heard[] = [];
  let server: Server;
  let port: number;

  beforeAll(async () => {
    server = web(heard, {
      'shop.test': (req, res) => {
        const path = req.url ?? '/';
        if (path === '/')
          return void res.writeHead(302, { location: '/home', 'set-cookie': ['sid=42; Path=/; HttpOnly', 'steal=1; Domain=ads.test', 'wide=1; Domain=test'] }).end();
        // Only a logged-in visitor sees the links.
        const loggedIn = (req.headers.cookie ?? '').includes('sid=42');
        if (path === '/home') return page(res, loggedIn ? ['/cart', `http://ads.test:${port}/`] : []);
        if (path === '/cart') return page(res, []);
        res.writeHead(404).end();
      },
      'ads.test': (req, res) => {
        const path = req.url ?? '/';
        if (path === '/') return page(res, ['/b', `http://shop.test:${port}/cart?from=ads`], { 'set-cookie': 'track=1' });
        if (path === '/b') return page(res, []);
        res.writeHead(404).end();
      },
    });
    port = await listenOnLoopback(server);
  });

  afterAll(() => closeServer(server));

  it('sends each site its own cookies, a redirect’s included, and never another site’s', async () => {
    const dir = tempDir('cookies-two-sites-');
    await crawlTestWeb({ hostsFile: () => '127.0.0.1 shop.test ads.test\n' }, dir, {
      args: [...FOLLOW_EVERY_LINK, '--sitemaps', 'off', `http://shop.test:${port}/`],
      delaySeconds: 0.05,
      timeoutMs: 60_000,
    });
    const at = (host: string, path: string) => heard.find((h) => h.host === host && h.path === path);
    expect(at('shop.test', '/')?.cookie).toBeUndefined();
    // The redirect's target was asked for with the session its response set.
    expect(at('shop.test', '/home')?.cookie).toBe('sid=42');
    expect(at('shop.test', '/cart')?.cookie).toBe('sid=42');
    expect(at('shop.test', '/cart?from=ads')?.cookie).toBe('sid=42');
    expect(at('ads.test', '/')?.cookie).toBeUndefined();
    expect(at('ads.test', '/b')?.cookie).toBe('track=1');
    expect(heard.filter((h) => h.path === '/robots.txt').every((h) => h.cookie === undefined)).toBe(true);
    const cookiesAt = (host: string) => heard.filter((h) => h.host === host).map((h) => h.cookie ?? '');
    expect(cookiesAt('ads.test').join(' ')).not.toMatch(/sid|steal|wide/);
    expect(cookiesAt('shop.test').join(' ')).not.toMatch(/track|steal|wide|robots/);
  }, 90_000);
});
