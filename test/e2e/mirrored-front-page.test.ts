import { execFile } from 'node:child_process';
import http from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { closeServer, listenOnLoopback } from '../support/local-server';
import { removeTempDirs, tempDir } from '../support/temp-dirs';

const run = promisify(execFile);
const CLI = join(__dirname, '../../dist/apps/crawl/src/main.js');
const HOSTS = Array.from({ length: 30 }, (_, i) => `mirror-${String(i).padStart(2, '0')}.test`);

/**
 * Thirty hosts serve the very same front page (a parked-domain template, a CMS default), whose relative links
 * lead to each host's own pages. The copies are not stored again, but their links are followed: every host's
 * own pages are reached, not only the first host's.
 */
describe('exact copies on other hosts still lead to their own pages', () => {
  const fetched = new Set<string>();
  let web: http.Server;
  let port: number;

  beforeAll(async () => {
    const front =
      '<!doctype html><html><head><title>Welcome</title></head><body><p>The same page everywhere.</p><a href="/about">about</a> <a href="news/today">news</a> <a href="http://mirror-00.test:PORT/shared">shared</a></body></html>';
    web = http.createServer((req, res) => {
      const host = (req.headers.host ?? '').split(':')[0];
      fetched.add(`${host}${req.url}`);
      if (req.url === '/robots.txt') return void res.writeHead(404).end();
      if (req.url === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(front.replace('PORT', String(port)));
      if (req.url === '/about' || req.url === '/news/today' || req.url === '/shared') {
        return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>${host}${req.url}</title><p>Only on ${host}: ${req.url}.</p>`);
      }
      res.writeHead(404).end();
    });
    port = await listenOnLoopback(web);
  });

  afterAll(async () => {
    await closeServer(web);
    removeTempDirs();
  });

  it("fetches every host's own pages, stores the front page once, and the shared page once", async () => {
    const args = [CLI, ...HOSTS.map((h) => `http://${h}:${port}/`), '--resolve', HOSTS.map((h) => `${h}=127.0.0.1`).join(','), '--allow-private'];
    args.push('--scope', 'domain', '--delay', '0.01', '--out', tempDir('mirrored-'), '--json');
    const env = { ...process.env, REDIS_URL: '', S3_URL: '', SITEMAP_MODE: 'off', FRONTIER_PER_IP_LIMIT: '64', FRONTIER_PER_IP_INTERVAL_MS: '0' };
    const { stdout } = await run(process.execPath, args, { env, timeout: 120_000 });
    const summary = JSON.parse(stdout);
    const missing = HOSTS.flatMap((h) => [`${h}/about`, `${h}/news/today`]).filter((page) => !fetched.has(page));
    expect(missing).toEqual([]);
    expect([...fetched].filter((page) => page.endsWith('/shared'))).toEqual(['mirror-00.test/shared']);
    expect(summary.totals.duplicate).toBe(HOSTS.length - 1);
    expect(summary.totals['duplicate.links-followed']).toBe(HOSTS.length - 1);
  }, 150_000);
});
