import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { removeTempDirs, tempDir } from '../support/temp-dirs';

const run = promisify(execFile);
const CLI = join(__dirname, '../../dist/apps/crawl/src/main.js');
const RULES = 'User-agent: *\nDisallow: /private\n';
/** The tiny give-up period of the test (DOWNLOADER_ROBOTS_UNREACHABLE_MAX_MS); the default is 30 minutes. */
const GIVE_UP_MS = 4000;
const RETRY_AFTER_S = 1;

interface Logged {
  host: string;
  path: string;
  at: number;
  status: number;
}

/**
 * Sites whose robots.txt misbehaves in one way each, served by name on 127.0.0.1:
 * - `example.test`: robots.txt moved to `www.example.test` (the most common redirect), which disallows /private;
 * - `guarded.test`: robots.txt redirects to `inside.test`, which resolves to 127.0.0.2, an address the crawl refuses;
 * - `five.test`: five redirects across hosts (`h1.five.test` … `h5.five.test`), the last one disallowing /private;
 * - `six.test`: six redirects across hosts, one more than followed;
 * - `flaky.test`: robots.txt always answers 500 with `Retry-After: 1`;
 * - `sleepy.test`: robots.txt asks for `Crawl-delay: 3600`.
 * Every site's home page links to /public and /private/secret.
 */
function robotsWeb(port: () => number) {
  const log: Logged[] = [];
  const robots = (host: string, res: http.ServerResponse) => {
    const to = (next: string) => res.writeHead(301, { location: `http://${next}:${port()}/robots.txt` }).end();
    const chain = /^(?:h(\d)\.)?(five|six)\.test$/.exec(host);
    if (chain) {
      const n = Number(chain[1] ?? 0);
      const length = chain[2] === 'five' ? 5 : 6;
      return n < length ? to(`h${n + 1}.${chain[2]}.test`) : res.writeHead(200, { 'content-type': 'text/plain' }).end(RULES);
    }
    switch (host) {
      case 'example.test':
        return to('www.example.test');
      case 'www.example.test':
        return res.writeHead(200, { 'content-type': 'text/plain' }).end(RULES);
      case 'guarded.test':
        return res.writeHead(302, { location: `http://inside.test:${port()}/robots.txt` }).end();
      case 'flaky.test':
        return res.writeHead(500, { 'retry-after': String(RETRY_AFTER_S) }).end('down');
      case 'sleepy.test':
        return res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nCrawl-delay: 3600\n');
      default:
        return res.writeHead(404).end();
    }
  };
  const server = http.createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
    const path = req.url ?? '/';
    res.on('finish', () => log.push({ host, path, at: Date.now(), status: res.statusCode }));
    if (path === '/robots.txt') return robots(host, res);
    // Each page a text of its own: a page too like another (a near duplicate) is not mined for links.
    const text = `<p>${createHash('sha256')
      .update(host + path)
      .digest('hex')
      .match(/.{4}/g)!
      .join(' ')}</p>`;
    if (path === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(`${text}<a href="/public">public</a> <a href="/private/secret">private</a>`);
    return res.writeHead(200, { 'content-type': 'text/html' }).end(text);
  });
  return { server, log };
}

afterAll(removeTempDirs);

/** RFC 9309 in a real crawl: robots.txt redirects across hosts, unreachable robots.txt, huge Crawl-delay. */
describe('robots.txt per RFC 9309, as the sites saw it', () => {
  const web = robotsWeb(() => (web.server.address() as AddressInfo).port);
  const seeds = ['example.test', 'guarded.test', 'five.test', 'six.test', 'flaky.test', 'sleepy.test'];
  let summary: Record<string, any>;
  let stderr: string;
  let seconds: number;
  const requests = (host: string) => web.log.filter((r) => r.host === host);
  const paths = (host: string) => requests(host).map((r) => r.path);

  beforeAll(async () => {
    await new Promise<void>((resolve) => web.server.listen(0, '127.0.0.1', resolve));
    const port = (web.server.address() as AddressInfo).port;
    const dir = tempDir('robots-rfc9309-');
    const names = [...seeds, 'www.example.test', ...[1, 2, 3, 4, 5].map((n) => `h${n}.five.test`), ...[1, 2, 3, 4, 5, 6].map((n) => `h${n}.six.test`)];
    writeFileSync(join(dir, 'hosts'), [...names.map((n) => `127.0.0.1 ${n}`), '127.0.0.2 inside.test'].join('\n'));
    const started = Date.now();
    // A run that does not end in time (a crawl held open by one host) is killed: what the sites saw still counts.
    const out = await run(
      process.execPath,
      [
        CLI,
        ...seeds.map((s) => `http://${s}:${port}/`),
        '--scope',
        'any',
        '--delay',
        '0.05',
        '--sitemaps',
        'off',
        '--hosts-file',
        join(dir, 'hosts'),
        '--out',
        dir,
        '--json',
      ],
      {
        env: {
          ...process.env,
          REDIS_URL: '',
          S3_URL: '',
          // The test web's own address is allowed; any other loopback address (inside.test) stays refused.
          DNS_ALLOW_CIDRS: '127.0.0.1/32',
          DOWNLOADER_ROBOTS_RETRY_MS: '100',
          DOWNLOADER_ROBOTS_ERROR_TTL_MS: '3000',
          DOWNLOADER_ROBOTS_UNREACHABLE_MAX_MS: String(GIVE_UP_MS),
        },
        timeout: 40_000,
      },
    ).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout || '{}', stderr: error.stderr ?? '' }));
    seconds = (Date.now() - started) / 1000;
    summary = JSON.parse(out.stdout);
    stderr = out.stderr;
  }, 90_000);

  afterAll(() => new Promise<void>((resolve) => (web.server.closeAllConnections(), web.server.close(() => resolve()))));

  it('obeys a robots.txt moved to www: the rules found there apply to the first host', () => {
    expect(paths('www.example.test')).toEqual(['/robots.txt']);
    expect(paths('example.test')).toContain('/public');
    expect(paths('example.test').filter((p) => p.startsWith('/private'))).toEqual([]);
  });

  it('a robots.txt redirect to an address the crawl refuses makes robots.txt unreachable: nothing of the site is fetched', () => {
    expect(paths('guarded.test').filter((p) => p !== '/robots.txt')).toEqual([]);
    expect(requests('inside.test')).toEqual([]);
    expect(summary.hostsSetAside).toContainEqual(expect.objectContaining({ host: expect.stringMatching(/^guarded\.test:/), reason: 'robots-unreachable' }));
  });

  it('follows five redirects across hosts and obeys the rules at the end; a sixth redirect means unavailable (allow all)', () => {
    const chain = (site: string, n: number) => [site, ...Array.from({ length: n }, (_, i) => `h${i + 1}.${site}`)];
    expect(chain('five.test', 5).map((h) => paths(h).filter((p) => p === '/robots.txt').length)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(paths('five.test')).toContain('/public');
    expect(paths('five.test').filter((p) => p.startsWith('/private'))).toEqual([]);
    // six.test → h1 … h5 followed (six requests); h5's redirect to h6 is one too many: h6 is never asked.
    expect(chain('six.test', 5).map((h) => paths(h).filter((p) => p === '/robots.txt').length)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(requests('h6.six.test')).toEqual([]);
    expect(paths('six.test')).toContain('/private/secret');
  });

  it('retries a robots.txt answering 500 no sooner than its Retry-After, then gives the site up after the period, reported', () => {
    const tries = requests('flaky.test');
    expect(tries.every((r) => r.path === '/robots.txt')).toBe(true);
    expect(tries.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < tries.length; i++) expect(tries[i].at - tries[i - 1].at).toBeGreaterThanOrEqual(RETRY_AFTER_S * 1000 - 50);
    const span = tries.at(-1)!.at - tries[0].at;
    expect(span).toBeGreaterThanOrEqual(GIVE_UP_MS - 100);
    expect(span).toBeLessThan(GIVE_UP_MS + 3000);
    expect(summary.hostsSetAside).toContainEqual(expect.objectContaining({ host: expect.stringMatching(/^flaky\.test:/), reason: 'robots-unreachable', urls: 1 }));
    expect(summary.totals['hosts-set-aside.robots-unreachable']).toBe(2);
    // While nothing else was left, the run said what it was waiting for.
    expect(stderr).toMatch(/only waiting for the robots\.txt of \d hosts? .*flaky\.test:\d+ \(answered 500; next try /);
  });

  it('sets a host with Crawl-delay 3600 aside at once and ends promptly, reporting it', () => {
    expect(paths('sleepy.test')).toEqual(['/robots.txt']);
    expect(summary.hostsSetAside).toContainEqual(
      expect.objectContaining({ host: expect.stringMatching(/^sleepy\.test:/), reason: 'crawl-delay', detail: 'Crawl-delay 3600 s > FRONTIER_MAX_CRAWL_DELAY_MS 30 s' }),
    );
    expect(summary.complete).toBe(true);
    expect(seconds).toBeLessThan(GIVE_UP_MS / 1000 + 20);
  });
});
