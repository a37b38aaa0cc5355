import { execFile, spawn } from 'node:child_process';
import http from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { TestDnsServer } from '../dns/test-dns-server';
import { closeServer, listenOnLoopback } from '../support/local-server';
import { removeTempDirs, tempDir } from '../support/temp-dirs';

const run = promisify(execFile);
const CLI = join(__dirname, '../../dist/apps/crawl/src/main.js');

/**
 * A site with one link over 8,192 characters on its front page and one `<loc>` over it in its sitemap, each
 * beside one that fits.
 */
function longLinksSite(req: http.IncomingMessage, res: http.ServerResponse): void {
  const long = `/${'x'.repeat(9000)}`;
  const origin = `http://${req.headers.host}`;
  if (req.url === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end(`User-agent: *\nAllow: /\nSitemap: ${origin}/map.xml\n`);
  if (req.url === '/map.xml') {
    const locs = [`${origin}${long}`, `${origin}/listed`].map((loc) => `<url><loc>${loc}</loc></url>`).join('');
    return void res.writeHead(200, { 'content-type': 'application/xml' }).end(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs}</urlset>`);
  }
  if (req.url === '/')
    return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>front</title><a href="${long}">long</a><a href="/linked">ok</a>`);
  if (req.url === '/linked' || req.url === '/listed')
    return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>${req.url}</title><p>${req.url}</p>`);
  res.writeHead(404).end();
}

/**
 * A run that fetches nothing, or leaves hosts behind, says why in words (the summary and its JSON) and exits
 * non-zero when nothing at all was fetched; Ctrl-C still writes the summary of what was done.
 */
describe('the embedded crawl says what happened', () => {
  let site: http.Server;
  let port: number;
  let dns: TestDnsServer;
  let pagesServed = 0;
  const env = { ...process.env, REDIS_URL: '', S3_URL: '', FRONTIER_PER_IP_INTERVAL_MS: '0' };

  beforeAll(async () => {
    pagesServed = 0;
    const page = (i: number) => `<!doctype html><title>page ${i}</title><p>Page ${i}.</p><a href="/p/${i + 1}">next</a>`;
    site = http.createServer((req, res) => {
      if (req.headers.host?.startsWith('long-links.test')) return longLinksSite(req, res);
      if (req.url === '/robots.txt' && req.headers.host?.startsWith('loop-b.')) return void res.writeHead(500).end();
      if (req.url === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
      if (req.url === '/broken') return void res.writeHead(500, { 'content-type': 'text/html' }).end('<!doctype html><title>down</title>');
      if (req.url === '/' || req.url!.startsWith('/p/'))
        return void (pagesServed++, res.writeHead(200, { 'content-type': 'text/html' }).end(page(Number(req.url!.slice(3)) || 0)));
      res.writeHead(404).end();
    });
    port = await listenOnLoopback(site);
    dns = await TestDnsServer.start({
      'loop-a.test': { address: '127.0.0.1', ttl: 60 },
      'loop-b.test': { address: '127.0.0.1', ttl: 60 },
      'long-links.test': { address: '127.0.0.1', ttl: 60 },
    });
  });

  afterAll(async () => {
    await closeServer(site);
    await dns.close();
    removeTempDirs();
  });

  async function crawl(args: string[], extra: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const { stdout, stderr } = await run(process.execPath, [CLI, ...args, '--out', tempDir('explains-'), '--json'], { env: { ...env, ...extra }, timeout: 60_000 });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }

  it('names refused addresses: how many hosts, and the option that allows them; exits 3 when nothing was fetched', async () => {
    const { code, stdout, stderr } = await crawl([`http://loop-a.test:${port}/`, `http://loop-b.test:${port}/`], { DNS_SERVERS: `127.0.0.1:${dns.port}` });
    expect(code).toBe(3);
    const summary = JSON.parse(stdout);
    expect(summary.notFetched).toEqual([expect.objectContaining({ reason: 'address-refused', hosts: 2 })]);
    expect(summary.notFetched[0].detail).toMatch(/2 hosts resolved to addresses the crawl may not reach .*loop-a\.test.*loop-b\.test.*--allow-private/);
    expect(stderr).toMatch(/crawl: nothing was fetched\. 2 hosts resolved to addresses .*--allow-private/);
  });

  it('refuses a seed at a literal refused address before crawling, in the same words (exit 2, nothing fetched); --allow-private lets it in', async () => {
    pagesServed = 0;
    const refused = await crawl([`http://0x7f.1:${port}/`, 'javascript:alert(1)']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /crawl: bad seeds: "http:\/\/0x7f\.1:\d+\/" \(address 127\.0\.0\.1 is not public.*--allow-private.*\), "javascript:alert\(1\)" \(scheme javascript: is not http\(s\)\)/,
    );
    expect(pagesServed).toBe(0);
    const allowed = await crawl([`http://0x7f.1:${port}/`, '--allow-private', '--max-pages', '1', '--sitemaps', 'off', '--delay', '0.01']);
    expect(allowed.code).toBe(4); // the page budget of 1 left the seed's link in the frontier
    expect(JSON.parse(allowed.stdout).totals).toMatchObject({ seeds: 1, fetched: 1 });
  });

  it('names DNS failures with the first errors', async () => {
    const { code, stdout } = await crawl([`http://nowhere.test:${port}/`], { DNS_SERVERS: `127.0.0.1:${dns.port}` });
    expect(code).toBe(3);
    const summary = JSON.parse(stdout);
    expect(summary.notFetched).toEqual([
      expect.objectContaining({
        reason: 'dns-failed',
        hosts: 1,
        detail: expect.stringMatching(/1 host did not resolve: nowhere\.test:\d+ \(DNS lookup of nowhere\.test failed: ENOTFOUND\)/),
      }),
    ]);
  });

  it('exits 0 with nothing to explain when the crawl finished; a repeated seed is one seed, a missing sitemap no error', async () => {
    const seed = `http://loop-a.test:${port}/p/8`;
    const { code, stdout } = await crawl([seed, seed, `http://LOOP-A.test:${port}/p/8`, '--max-depth', '1', '--allow-private', '--delay', '0.01'], {
      DNS_SERVERS: `127.0.0.1:${dns.port}`,
    });
    expect(code).toBe(0);
    const summary = JSON.parse(stdout);
    expect(summary).toMatchObject({ stopped: 'finished', complete: true, left: 0, pagesStored: 2, notFetched: [] });
    expect(summary.totals.seeds).toBe(1);
    expect(summary.totals['sitemap.missing']).toBe(1);
    expect(summary.totals['status.4xx']).toBeUndefined();
  });

  it('counts links longer than a message carries as filtered too-long, from a page and from a sitemap, and crawls the rest', async () => {
    const { code, stdout } = await crawl([`http://long-links.test:${port}/`, '--allow-private', '--delay', '0.01'], { DNS_SERVERS: `127.0.0.1:${dns.port}` });
    expect(code).toBe(0);
    const summary = JSON.parse(stdout);
    expect(summary.totals['filtered.too-long']).toBe(2);
    expect(summary.totals.stored).toBe(3); // the seed, the page it links to, the page the sitemap lists
  });

  it('a crawl stopped by --max-pages says so and what it left, and exits 4', async () => {
    const { code, stdout } = await crawl([`http://loop-a.test:${port}/`, '--max-pages', '3', '--allow-private', '--delay', '0.01', '--sitemaps', 'off'], {
      DNS_SERVERS: `127.0.0.1:${dns.port}`,
    });
    expect(code).toBe(4);
    const summary = JSON.parse(stdout);
    // Each page links the next: the third one's link is left queued.
    expect(summary).toMatchObject({ stopped: 'budget', complete: false, left: 1, pagesFetched: 3 });
    expect(summary.notFetched).toEqual([
      { reason: 'budget', urls: 1, detail: '1 URL left in the frontier when the page budget was spent (--max-pages 3, FRONTIER_MAX_PAGES): raise it to fetch more.' },
    ]);
  });

  it('a crawl stopped by --max-time says so and what it left, and exits 4', async () => {
    const { code, stdout } = await crawl([`http://loop-a.test:${port}/`, '--max-time', '2.5', '--allow-private', '--delay', '0.5', '--sitemaps', 'off'], {
      DNS_SERVERS: `127.0.0.1:${dns.port}`,
    });
    expect(code).toBe(4);
    const summary = JSON.parse(stdout);
    expect(summary).toMatchObject({ stopped: 'time-limit', complete: false });
    expect(summary.left).toBeGreaterThanOrEqual(1);
    expect(summary.notFetched[0]).toMatchObject({ reason: 'time-limit', urls: summary.left, detail: expect.stringMatching(/--max-time 2\.5 s, CRAWL_MAX_TIME_MS/) });
  });

  it('a crawl whose only seed answers with an HTTP error fetched nothing: not complete, exit 3, and says why', async () => {
    const broken = await crawl([`http://loop-a.test:${port}/broken`, '--allow-private', '--sitemaps', 'off'], {
      DNS_SERVERS: `127.0.0.1:${dns.port}`,
      FRONTIER_TRANSIENT_ATTEMPTS: '1',
    });
    expect(broken.code).toBe(3);
    expect(JSON.parse(broken.stdout)).toMatchObject({
      stopped: 'finished',
      complete: false,
      pagesStored: 0,
      notFetched: [expect.objectContaining({ reason: 'retries-exhausted', urls: 1 })],
    });
    expect(broken.stderr).toMatch(/crawl: nothing was fetched\. every page answered with an HTTP error \(5xx 1\)\. 1 URL failed \(status-500 1\)/);
    const missing = await crawl([`http://loop-a.test:${port}/missing`, '--allow-private', '--sitemaps', 'off'], { DNS_SERVERS: `127.0.0.1:${dns.port}` });
    expect(missing.code).toBe(3);
    expect(JSON.parse(missing.stdout)).toMatchObject({ stopped: 'finished', complete: false, pagesFetched: 1, pagesStored: 0 });
    expect(missing.stderr).toMatch(/crawl: nothing was fetched\. every page answered with an HTTP error \(4xx 1\)/);
  });

  it('gives up an unreachable robots.txt (500, connection refused) soon once nothing else is left, naming the cause', async () => {
    const closed = http.createServer();
    const closedPort = await listenOnLoopback(closed);
    await closeServer(closed);
    const started = Date.now();
    const { code, stdout } = await crawl([`http://loop-a.test:${closedPort}/`, `http://loop-b.test:${port}/`, '--allow-private', '--sitemaps', 'off'], {
      DNS_SERVERS: `127.0.0.1:${dns.port}`,
      CRAWL_ROBOTS_IDLE_WAIT_MS: '1000',
    });
    // DOWNLOADER_ROBOTS_UNREACHABLE_MAX_MS is left at its 30 minutes: the idle wait is what ended it.
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(code).toBe(3);
    const summary = JSON.parse(stdout);
    expect(summary.hostsSetAside).toEqual([
      expect.objectContaining({
        host: `loop-a.test:${closedPort}`,
        reason: 'robots-unreachable',
        urls: 1,
        detail: expect.stringMatching(/last connection refused .*CRAWL_ROBOTS_IDLE_WAIT_MS/),
      }),
      expect.objectContaining({ host: `loop-b.test:${port}`, reason: 'robots-unreachable', urls: 1, detail: expect.stringMatching(/last answered 500/) }),
    ]);
    expect(summary.notFetched).toEqual([
      expect.objectContaining({ reason: 'robots-unreachable', hosts: 2, urls: 2, detail: expect.stringMatching(/connection refused/) }),
    ]);
    expect(summary.errors).toBe(2);
    expect(summary.totals).toMatchObject({ 'error.robots.refused': 1, 'error.robots.status-500': 1 });
  }, 40_000);

  it('Ctrl-C writes the summary of what was done, then exits 130', async () => {
    pagesServed = 0;
    const child = spawn(
      process.execPath,
      [CLI, `http://loop-a.test:${port}/`, '--allow-private', '--delay', '1', '--sitemaps', 'off', '--out', tempDir('explains-int-'), '--json'],
      {
        env: { ...env, DNS_SERVERS: `127.0.0.1:${dns.port}` },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    // Let it fetch robots.txt and a page (one request a second), then interrupt it.
    const until = Date.now() + 20_000;
    while (pagesServed < 1 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 300));
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(130);
    const summary = JSON.parse(stdout);
    expect(summary).toMatchObject({ stopped: 'interrupted', complete: false, interrupted: 'SIGINT' });
    expect(summary.notFetched).toEqual([expect.objectContaining({ reason: 'interrupted', urls: summary.left })]);
    expect(summary.pagesFetched).toBeGreaterThanOrEqual(1);
  }, 30_000);
});
