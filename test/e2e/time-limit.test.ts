import http from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { closeServer, listenOnLoopback } from '../support/local-server';
import { runCrawlCli } from '../support/run-crawl-cli';
import { removeTempDirs, tempDir } from '../support/temp-dirs';

/**
 * `--max-time` ends the crawl cleanly: the page in flight when the time is up is finished (fetched, parsed,
 * its link kept), not cut off, and the summary counts it and says why the crawl stopped.
 */
describe('the embedded crawl at its time limit', () => {
  let server: http.Server;
  let port: number;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const page = (body: string) => res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>${req.url}</title>${body}`);
      if (req.url === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
      if (req.url === '/') return void page('<a href="/slow">slow</a>');
      // In flight across the time limit: answered 9 s after it was asked for.
      if (req.url === '/slow') return void setTimeout(() => page('<a href="/next">next</a>'), 9000);
      if (req.url === '/next') return void page('<p>the end</p>');
      res.writeHead(404).end();
    });
    port = await listenOnLoopback(server);
  });

  afterAll(async () => {
    await closeServer(server);
    removeTempDirs();
  });

  it('finishes the page in flight, keeps its link, and says it stopped at the time limit', async () => {
    const out = tempDir('time-limit-');
    const { code, stdout } = await runCrawlCli(
      [`http://tl.test:${port}/`, '--max-time', '6', '--delay', '0.1', '--allow-private', '--resolve', 'tl.test=127.0.0.1', '--sitemaps', 'off', '--out', out, '--json'],
      { env: { ...process.env, REDIS_URL: '', S3_URL: '', FRONTIER_PER_IP_INTERVAL_MS: '0', FRONTIER_DELAY_MULTIPLIER: '0' }, timeoutMs: 90_000 },
    );
    expect(code).toBe(4);
    const summary = JSON.parse(stdout);
    expect(summary).toMatchObject({ stopped: 'time-limit', pagesFetched: 2, left: 1 });
    expect(summary.totals['frontier.time-limit']).toBe(1);
    const log = readFileSync(join(out, 'fetch-log.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(log.filter((e) => e.url.endsWith('/slow'))).toEqual([expect.objectContaining({ status: 200 })]);
    expect(log.some((e) => e.url.endsWith('/next'))).toBe(false);
  }, 120_000);
});
