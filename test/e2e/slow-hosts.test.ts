import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { closeServer, listenOnLoopback } from '../support/local-server';
import { removeTempDirs, tempDir } from '../support/temp-dirs';

const run = promisify(execFile);
const CLI = join(__dirname, '../../dist/apps/crawl/src/main.js');

/**
 * A small web where one host answers every page with its headers at once and then a byte a second: the
 * embedded crawl cuts those bodies at the minimum transfer rate, backs the host off after three timeouts in
 * a row, fetches every page of the other hosts, and ends well before a single total timeout (60 s) would
 * have passed, naming the slow host and why.
 */
describe('a slow host does not hold the crawl', () => {
  let site: http.Server;
  let port: number;
  const PAGES = 6;
  const SLOW_PAGES = 8;

  beforeAll(async () => {
    site = http.createServer((req, res) => {
      const host = (req.headers.host ?? '').split(':')[0];
      if (req.url === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
      if (host === 'slow.test') {
        res.writeHead(200, { 'content-type': 'text/html', 'content-length': 1000 });
        const timer = setInterval(() => res.write('x'), 1000);
        res.once('close', () => clearInterval(timer));
        return;
      }
      // Each fast host: a front page linking its own pages and half of the slow host's.
      const first = host === 'fast-a.test' ? 0 : SLOW_PAGES / 2;
      const links = [
        ...Array.from({ length: PAGES - 1 }, (_, i) => `/p/${i + 1}`),
        ...Array.from({ length: SLOW_PAGES / 2 }, (_, i) => `http://slow.test:${port}/s/${first + i}`),
      ];
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>${host} ${req.url}</title>${links.map((l) => `<a href="${l}">${l}</a>`).join('')}`);
    });
    port = await listenOnLoopback(site);
  });

  afterAll(async () => {
    await closeServer(site);
    removeTempDirs();
  });

  it('cuts the trickle, backs the host off after three timeouts, fetches the rest and ends in bounded time', async () => {
    const out = tempDir('slow-hosts-');
    const started = Date.now();
    const args = [
      CLI,
      `http://fast-a.test:${port}/`,
      `http://fast-b.test:${port}/`,
      '--scope',
      'any',
      '--allow-private',
      '--delay',
      '0.05',
      '--sitemaps',
      'off',
      '--out',
      out,
      '--json',
    ];
    for (const name of ['fast-a.test', 'fast-b.test', 'slow.test']) args.push('--resolve', `${name}=127.0.0.1`);
    const env = {
      ...process.env,
      REDIS_URL: '',
      S3_URL: '',
      FRONTIER_PER_IP_INTERVAL_MS: '0',
      DOWNLOADER_MIN_BYTES_PER_SECOND: '100',
      DOWNLOADER_MIN_RATE_WINDOW_MS: '1000',
      FRONTIER_HOST_TIMEOUT_STRIKES: '3',
      FRONTIER_HOST_TIMEOUT_BACKOFF_MS: '60000',
    };
    // Without the rate cut, one slow page alone takes the total timeout (60 s).
    const { stdout } = await run(process.execPath, args, { env, timeout: 45_000 });
    const seconds = (Date.now() - started) / 1000;
    expect(seconds).toBeLessThan(30);

    const summary = JSON.parse(stdout);
    const log = readFileSync(join(out, 'fetch-log.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { url: string; status: number | null; errorKind?: string });
    for (const host of ['fast-a.test', 'fast-b.test']) {
      const fetched = log.filter((e) => e.status === 200 && new URL(e.url).hostname === host && new URL(e.url).pathname !== '/robots.txt');
      expect(new Set(fetched.map((e) => new URL(e.url).pathname)).size).toBe(PAGES);
    }
    const slow = log.filter((e) => new URL(e.url).hostname === 'slow.test' && new URL(e.url).pathname !== '/robots.txt');
    expect(slow.map((e) => e.errorKind)).toEqual(['timeout-rate', 'timeout-rate', 'timeout-rate']);
    // A timed-out page goes back to the head of its host's queue (FRONTIER_TRANSIENT_ATTEMPTS, 3): the host is
    // backed off after its third timeout in a row, and that page is given up.
    expect(new Set(slow.map((e) => e.url)).size).toBe(1);
    expect(summary.totals['failed-urls.timeout-rate']).toBe(1);
    expect(summary.totals['error.fetch.timeout-rate']).toBe(3);

    expect(summary.hostsSetAside).toEqual([expect.objectContaining({ host: `slow.test:${port}`, reason: 'timeouts', urls: SLOW_PAGES - 1 })]);
    expect(summary.notFetched).toEqual([
      expect.objectContaining({ reason: 'timeouts', hosts: 1, urls: SLOW_PAGES - 1 }),
      expect.objectContaining({ reason: 'retries-exhausted', urls: 1 }),
    ]);
    expect(summary.notFetched[0].detail).toMatch(/1 host set aside, their requests kept timing out .*slow\.test/);
  }, 60_000);
});
