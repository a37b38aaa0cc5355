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
 * embedded crawl cuts those bodies at the minimum transfer rate, backs the host off after three of its URLs
 * timed out in a row, fetches every page of the other hosts, and ends well before a single total timeout
 * (60 s) would have passed, naming the slow host and why. One slow page on a quick host fails alone.
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
      if (host === 'slow.test' || req.url === '/drip/1') {
        res.writeHead(200, { 'content-type': 'text/html', 'content-length': 1000 });
        const timer = setInterval(() => res.write('x'), 1000);
        res.once('close', () => clearInterval(timer));
        return;
      }
      // The mixed host: its one trickling page first, then five quick ones.
      if (host === 'mixed.test') {
        const links = req.url === '/' ? ['/drip/1', ...Array.from({ length: 5 }, (_, i) => `/p/${i + 1}`)] : [];
        return void res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(`<!doctype html><title>${req.url}</title>${links.map((l) => `<a href="${l}">${l}</a>`).join('')}`);
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

  const SLOW_ENV = {
    REDIS_URL: '',
    S3_URL: '',
    FRONTIER_PER_IP_INTERVAL_MS: '0',
    DOWNLOADER_MIN_BYTES_PER_SECOND: '100',
    DOWNLOADER_MIN_RATE_WINDOW_MS: '1000',
    FRONTIER_HOST_TIMEOUT_STRIKES: '3',
    FRONTIER_HOST_TIMEOUT_BACKOFF_MS: '60000',
  };

  /** The embedded crawl of `seeds`: its JSON summary, exit code and fetch log (robots.txt left out). */
  async function crawl(seeds: string[], env: Record<string, string>) {
    const out = tempDir('slow-hosts-');
    const args = [CLI, ...seeds, '--scope', 'any', '--allow-private', '--delay', '0.05', '--sitemaps', 'off', '--out', out, '--json'];
    for (const name of ['fast-a.test', 'fast-b.test', 'slow.test', 'mixed.test']) args.push('--resolve', `${name}=127.0.0.1`);
    // Without the rate cut, one slow page alone takes the total timeout (60 s).
    const { stdout, code } = await run(process.execPath, args, { env: { ...process.env, ...SLOW_ENV, ...env }, timeout: 45_000 }).then(
      ({ stdout }) => ({ stdout, code: 0 }),
      (error: { stdout: string; code: number }) => ({ stdout: error.stdout, code: error.code }),
    );
    const log = readFileSync(join(out, 'fetch-log.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { time: string; url: string; status: number | null; durationMs: number; errorKind?: string; robots?: boolean })
      .filter((e) => !e.robots);
    return { summary: JSON.parse(stdout), code, log };
  }

  it('cuts the trickle, backs the host off after three of its URLs timed out, fetches the rest and ends in bounded time', async () => {
    const started = Date.now();
    // The timed-out URLs' retries come back soon (production: 30 s, then 60 s).
    const { summary, code, log } = await crawl([`http://fast-a.test:${port}/`, `http://fast-b.test:${port}/`], { FRONTIER_RETRY_BACKOFF_MS: '300' });
    const seconds = (Date.now() - started) / 1000;
    expect(seconds).toBeLessThan(30);

    for (const host of ['fast-a.test', 'fast-b.test']) {
      const fetched = log.filter((e) => e.status === 200 && new URL(e.url).hostname === host);
      expect(new Set(fetched.map((e) => new URL(e.url).pathname)).size).toBe(PAGES);
    }
    const slow = log.filter((e) => new URL(e.url).hostname === 'slow.test');
    expect(slow.every((e) => e.errorKind === 'timeout-rate')).toBe(true);
    // Strikes count URLs: three distinct ones timed out before the host was backed off.
    expect(new Set(slow.map((e) => e.url)).size).toBe(3);
    expect(summary.totals['error.fetch.timeout-rate']).toBe(slow.length);

    const [aside] = summary.hostsSetAside;
    expect(summary.hostsSetAside).toEqual([expect.objectContaining({ host: `slow.test:${port}`, reason: 'timeouts' })]);
    expect(aside.detail).toMatch(/^3 URLs timed out in a row/);
    // Every slow URL not given up is still queued for it.
    expect(aside.urls).toBe(SLOW_PAGES - (summary.totals['failed-urls'] ?? 0));
    expect(summary.notFetched[0]).toEqual(expect.objectContaining({ reason: 'timeouts', hosts: 1, urls: aside.urls }));
    expect(summary.notFetched[0].detail).toMatch(/1 host set aside, their requests kept timing out .*slow\.test/);
    // It finished without waiting for the backed-off host, and says it left its URLs.
    expect(summary).toMatchObject({ stopped: 'finished', complete: false, left: aside.urls });
    expect(code).toBe(0);
  }, 60_000);

  it('one trickling page among quick ones fails alone, its retries held like any: the host and its quick pages go on', async () => {
    const backoffMs = 1500;
    const { summary, code, log } = await crawl([`http://mixed.test:${port}/`], { FRONTIER_RETRY_BACKOFF_MS: String(backoffMs) });
    const drips = log.filter((e) => new URL(e.url).pathname === '/drip/1');
    expect(drips.map((e) => e.errorKind)).toEqual(['timeout-rate', 'timeout-rate', 'timeout-rate']);
    // Each retry waited its backoff (±25 %: at least 0.75 of it, doubled the second time) after the try before ended.
    for (let i = 1; i < drips.length; i++) {
      const ended = Date.parse(drips[i - 1].time) + drips[i - 1].durationMs;
      expect(Date.parse(drips[i].time) - ended).toBeGreaterThanOrEqual(0.75 * backoffMs * 2 ** (i - 1) - 50);
    }
    const quick = log.filter((e) => e.status === 200 && new URL(e.url).pathname.startsWith('/p/'));
    expect(new Set(quick.map((e) => e.url)).size).toBe(5);
    expect(summary.hostsSetAside).toEqual([]);
    expect(summary.failedUrls).toEqual([expect.objectContaining({ url: `http://mixed.test:${port}/drip/1`, reason: 'timeout-rate', attempts: 3 })]);
    expect(summary.notFetched).toEqual([expect.objectContaining({ reason: 'retries-exhausted', urls: 1 })]);
    expect(summary).toMatchObject({ stopped: 'finished', complete: true, left: 0 });
    expect(code).toBe(0);
  }, 60_000);
});
