import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { closeServer, listenOnLoopback } from '../support/local-server';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { crawlTestWeb } from '../support/test-web-crawl';

afterAll(removeTempDirs);

/** Longer than the crawl takes to spend its budget on the pages its sitemap says changed just now. */
const INITIAL_MS = 8000;

/**
 * The freshness signals a site gives besides Expires, in the embedded crawl with --recrawl: a sitemap's
 * `<lastmod>` and `<changefreq>` set a page's first interval, `Cache-Control: max-age` holds the revisit
 * off, `no-store` makes it unconditional.
 */
describe('freshness signals: sitemap lastmod and changefreq, Cache-Control max-age and no-store', () => {
  let server: Server;
  const requests: { path: string; at: number; headers: IncomingHttpHeaders }[] = [];
  const to = (path: string) => requests.filter((r) => r.path === path);

  beforeAll(async () => {
    server = createServer((req, res) => {
      const path = req.url!;
      requests.push({ path, at: Date.now(), headers: req.headers });
      const origin = `http://${req.headers.host}`;
      const html = (links: string[] = []) => `<!doctype html><title>${path}</title>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}`;
      const page = (headers: Record<string, string> = {}, links?: string[]) => res.writeHead(200, { 'content-type': 'text/html', ...headers }).end(html(links));
      if (path === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end(`User-agent: *\nAllow: /\nSitemap: ${origin}/sitemap.xml\n`);
      if (path === '/sitemap.xml') {
        const url = (loc: string, fields: string) => `<url><loc>${origin}${loc}</loc>${fields}</url>`;
        const justNow = `<lastmod>${new Date(Date.now() - 500).toISOString()}</lastmod>`;
        const xml = [
          url('/recent', justNow),
          url('/no-store', justNow),
          url('/max-age', justNow),
          url('/old', '<lastmod>2020-01-01</lastmod>'),
          url('/daily', '<changefreq>daily</changefreq>'),
        ].join('');
        return void res.writeHead(200, { 'content-type': 'application/xml' }).end(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${xml}</urlset>`);
      }
      if (path === '/') return void page({}, ['/plain']);
      if (path === '/max-age') return void page({ 'cache-control': 'max-age=3600', expires: new Date(Date.now() - 60_000).toUTCString() });
      if (path === '/no-store') {
        if (req.headers['if-none-match']) return void res.writeHead(304).end();
        return void page({ 'cache-control': 'no-store', etag: '"same"' });
      }
      if (['/plain', '/recent', '/old', '/daily'].includes(path)) return void page({ etag: '"same"' });
      res.writeHead(404).end();
    });
    const port = await listenOnLoopback(server);
    await crawlTestWeb({ hostsFile: () => '127.0.0.1 fresh.test\n' }, tempDir('freshness-signals-'), {
      args: [`http://fresh.test:${port}/`, '--recrawl', '--max-pages', '12'],
      delaySeconds: 0.05,
      env: { FRONTIER_RECRAWL_INITIAL_MS: String(INITIAL_MS), FRONTIER_RECRAWL_MIN_MS: '200', FRONTIER_RECRAWL_MAX_MS: '600000' },
      timeoutMs: 90_000,
    });
  }, 120_000);

  afterAll(() => closeServer(server));

  it('does not come back before the end of a Cache-Control max-age, whatever Expires or its sitemap says', () => {
    expect(to('/max-age')).toHaveLength(1);
  });

  it('keeps no validators of a no-store page: its revisits ask unconditionally', () => {
    const visits = to('/no-store');
    expect(visits.length).toBeGreaterThanOrEqual(2);
    for (const v of visits) expect(v.headers['if-none-match']).toBeUndefined();
    // A page with validators is asked conditionally, as before.
    expect(to('/recent')[1]?.headers['if-none-match']).toBe('"same"');
  });

  it('takes a sitemap page’s first interval from its <lastmod> or <changefreq>', () => {
    const [first, second] = to('/recent');
    // Changed just before it was listed: back sooner than FRONTIER_RECRAWL_INITIAL_MS brings a page (/plain).
    expect(second.at - first.at).toBeLessThan(INITIAL_MS);
    // Unchanged since 2020, or changing daily: not back within the crawl.
    expect(to('/old')).toHaveLength(1);
    expect(to('/daily')).toHaveLength(1);
  });
});
