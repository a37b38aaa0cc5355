import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { clearPrefix, REDIS_URL } from '../support/redis-prefix';
import { closeServer, listenOnLoopback } from '../support/local-server';
import { removeTempDirs, tempDir } from '../support/temp-dirs';

const run = promisify(execFile);
const CLI = join(__dirname, '../../dist/apps/crawl/src/main.js');
const BACKOFF_MS = 400;

/**
 * A page that fails in a way that may pass is tried again after a doubling backoff, in the frontier's time;
 * one that keeps failing is given up after FRONTIER_TRANSIENT_ATTEMPTS and listed with its reason; a 404 is
 * the site's answer and is asked once.
 */
describe('the embedded crawl tries failed pages again', () => {
  let site: http.Server;
  let port: number;
  const requests = new Map<string, number[]>();

  beforeAll(async () => {
    site = http.createServer((req, res) => {
      const path = req.url!;
      const times = requests.get(path) ?? [];
      times.push(Date.now());
      requests.set(path, times);
      if (path === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
      if (path === '/') {
        const links = ['/flaky', '/reset', '/missing'].map((p) => `<a href="${p}">${p}</a>`).join(' ');
        return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>home</title><p>Links: ${links}</p>`);
      }
      if (path === '/flaky' && times.length <= 2) return void res.writeHead(500, { 'content-type': 'text/plain' }).end('try later');
      if (path === '/flaky') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>flaky</title><p>Third time lucky.</p>');
      // The connection is dropped before any answer: the client sees a reset.
      if (path === '/reset') return void req.socket.destroy();
      res.writeHead(404).end();
    });
    port = await listenOnLoopback(site);
  });

  // In memory, and on Redis (the frontier store's Lua scripts, the failed-URL record in Redis).
  const prefix = `retry-${randomBytes(4).toString('hex')}`;
  afterAll(async () => {
    await closeServer(site);
    removeTempDirs();
    await clearPrefix(prefix);
  });

  it.each([
    ['in memory', []],
    ['on Redis', ['--redis', REDIS_URL, '--prefix', prefix]],
  ])(
    '%s: fetches a page answering 500 twice on its 3rd attempt, spaced by the backoff; gives up on a page that always resets after 3, listed with its reason; asks for a 404 once',
    async (_shape, flags) => {
      requests.clear();
      const seed = `http://retry.test:${port}/`;
      const args = [
        CLI,
        seed,
        '--resolve',
        'retry.test=127.0.0.1',
        '--allow-private',
        '--delay',
        '0.05',
        '--sitemaps',
        'off',
        ...flags,
        '--out',
        tempDir('retry-'),
        '--json',
      ];
      const env = {
        ...process.env,
        REDIS_URL: '',
        S3_URL: '',
        FRONTIER_PER_IP_INTERVAL_MS: '0',
        FRONTIER_RETRY_BACKOFF_MS: String(BACKOFF_MS),
        FRONTIER_TRANSIENT_ATTEMPTS: '3',
      };
      const { stdout } = await run(process.execPath, args, { env, timeout: 60_000 });
      const summary = JSON.parse(stdout);

      const flaky = requests.get('/flaky') ?? [];
      expect(flaky).toHaveLength(3);
      // The first retry waits the backoff (±25 %), the second twice that.
      expect(flaky[1] - flaky[0]).toBeGreaterThanOrEqual(BACKOFF_MS * 0.75);
      expect(flaky[2] - flaky[1]).toBeGreaterThanOrEqual(2 * BACKOFF_MS * 0.75);
      expect(requests.get('/reset')).toHaveLength(3);
      expect(requests.get('/missing')).toHaveLength(1);

      expect(summary.complete).toBe(true);
      expect(summary.pagesStored).toBe(2); // the home page and /flaky
      expect(summary.totals).toMatchObject({ 'failed-urls': 1, 'failed-urls.reset': 1, 'frontier.retry.status-500': 2, 'frontier.retry.reset': 2 });
      expect(summary.totals['failed-urls.status-404']).toBeUndefined();
      expect(summary.failedUrls).toEqual([expect.objectContaining({ url: `http://retry.test:${port}/reset`, reason: 'reset', attempts: 3, error: expect.any(String) })]);
      expect(summary.notFetched).toEqual([expect.objectContaining({ reason: 'retries-exhausted', urls: 1 })]);
      expect(summary.notFetched[0].detail).toMatch(/1 URL failed \(reset 1\).*\/reset \(reset, 3 attempts\)/);
    },
    90_000,
  );
});
