import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { closeServer, listenOnLoopback } from '../support/local-server';
import { runCrawlCli } from '../support/run-crawl-cli';
import { removeTempDirs, tempDir } from '../support/temp-dirs';

/** Each page's body: 10 000 bytes, a link to the next page of a chain of 20. */
const PAGE_BYTES = 10_000;
const CHAIN = 20;

/**
 * `--max-bytes` ends the crawl the way `--max-pages` does: once the bodies fetched add up to it, nothing more is
 * dispatched, the pages in flight finish, and the summary says the byte budget stopped it with URLs left.
 */
/** In memory, on loopback, no pacing but the host's own: the budget, not the politeness, ends each run. */
const RUN_OPTIONS = { env: { ...process.env, REDIS_URL: '', S3_URL: '', FRONTIER_PER_IP_INTERVAL_MS: '0', FRONTIER_DELAY_MULTIPLIER: '0' }, timeoutMs: 90_000 };

describe('the embedded crawl at its byte budget', () => {
  let server: http.Server;
  let port: number;
  const asked: string[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
      const n = /^\/p\/(\d+)$/.exec(req.url ?? '')?.[1];
      if (!n || Number(n) > CHAIN) return void res.writeHead(404).end();
      asked.push(`${(req.headers.host ?? '').split(':')[0]}${req.url}`);
      const head = `<!doctype html><title>page ${n}</title><a href="/p/${Number(n) + 1}">next</a><p>`;
      // Words of the page's own, so that no page is a (near) duplicate of another and every link is followed.
      let words = '';
      for (let i = 0; words.length < PAGE_BYTES; i++) words += ` w${n}x${(i * 7919) % 10007}`;
      const body = (head + words).slice(0, PAGE_BYTES);
      res.writeHead(200, { 'content-type': 'text/html', 'content-length': String(Buffer.byteLength(body)) }).end(body);
    });
    port = await listenOnLoopback(server);
  });

  afterAll(async () => {
    await closeServer(server);
    removeTempDirs();
  });

  it('stops dispatching once the bytes fetched reach --max-bytes, and says so', async () => {
    const out = tempDir('byte-budget-');
    const { code, stdout } = await runCrawlCli(
      [
        `http://bb.test:${port}/p/1`,
        '--max-bytes',
        String(2.5 * PAGE_BYTES),
        '--delay',
        '0.5',
        '--allow-private',
        '--resolve',
        'bb.test=127.0.0.1',
        '--sitemaps',
        'off',
        '--out',
        out,
        '--json',
      ],
      RUN_OPTIONS,
    );
    const summary = JSON.parse(stdout);
    expect(code).toBe(4);
    expect(summary.stopped).toBe('byte-budget');
    expect(summary.totals['frontier.byte-budget-spent']).toBe(1);
    // Three pages spend the budget; the count reaches the frontier within a fraction of the 0.5 s between two
    // requests, so at most one more page may have started by then.
    expect(asked.length).toBeGreaterThanOrEqual(3);
    expect(asked.length).toBeLessThanOrEqual(4);
    expect(asked).toEqual(Array.from({ length: asked.length }, (_, i) => `bb.test/p/${i + 1}`));
    expect(summary.totals['bytes.fetched']).toBe(asked.length * PAGE_BYTES);
    expect(summary.left).toBeGreaterThan(0);
    expect(summary.notFetched[0]).toMatchObject({ reason: 'byte-budget', detail: expect.stringContaining('--max-bytes 25000, FRONTIER_MAX_BYTES') });
  }, 120_000);

  it("drops a host's other URLs once it had its site's maxBytes, and no other host's", async () => {
    asked.length = 0;
    const out = tempDir('site-byte-budget-');
    const file = join(out, 'sites.yaml');
    writeFileSync(file, `sites:\n  bb.test:\n    maxBytes: ${2.5 * PAGE_BYTES}\n`);
    const { code, stdout } = await runCrawlCli(
      [
        `http://bb.test:${port}/p/1`,
        `http://other.test:${port}/p/1`,
        '--site-settings',
        file,
        '--max-depth',
        '5',
        '--delay',
        '0.1',
        '--allow-private',
        '--resolve',
        'bb.test=127.0.0.1',
        '--resolve',
        'other.test=127.0.0.1',
        '--sitemaps',
        'off',
        '--out',
        out,
        '--json',
      ],
      RUN_OPTIONS,
    );
    const summary = JSON.parse(stdout);
    expect(code).toBe(0);
    expect(summary.stopped).toBe('finished');
    // bb.test: three pages (30 000 bytes) reach its 25 000; with one request in flight per host, none more starts.
    expect(asked.filter((a) => a.startsWith('bb.test')).length).toBe(3);
    // other.test has no budget: the chain to --max-depth 5, six pages.
    expect(asked.filter((a) => a.startsWith('other.test')).length).toBe(6);
  }, 120_000);
});
