import { execFile } from 'node:child_process';
import http from 'node:http';
import net, { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DEFAULT_BLOCKED_PORTS } from '@crawler/url';
import { removeTempDirs, tempDir } from '../support/temp-dirs';

const run = promisify(execFile);
const CLI = join(__dirname, '../../dist/apps/crawl/src/main.js');

/**
 * A site whose pages link to its own host on an infrastructure port (a bare TCP listener standing in for
 * Redis or MinIO: it counts the connections it is offered) and on SMTP's port, and redirect there. The
 * listener's port is added to the built-in block list, as the test cannot bind the real ones. The crawl
 * must fetch the site and offer that listener no connection at all: no robots.txt, no page.
 */
describe('the crawl never connects to a refused port', () => {
  const requests: string[] = [];
  let connections = 0;
  let infrastructure: net.Server;
  let site: http.Server;
  let sitePort: number;
  let blockedPort: number;

  beforeAll(async () => {
    infrastructure = net.createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => infrastructure.listen(0, '127.0.0.1', resolve));
    blockedPort = (infrastructure.address() as AddressInfo).port;
    const html = (body: string) => `<!doctype html><html><head><title>portal</title></head><body>${body}</body></html>`;
    const routes: Record<string, (res: http.ServerResponse) => void> = {
      '/robots.txt': (res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n'),
      '/': (res) =>
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(
            html(
              [
                `/a`,
                `/moved`,
                `http://portal.test:${blockedPort}/`,
                `http://portal.test:${blockedPort}/keys`,
                'http://portal.test:25/',
                `https://portal.test:${blockedPort}/`,
              ]
                .map((href) => `<a href="${href}">${href}</a>`)
                .join(' '),
            ),
          ),
      '/a': (res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html('<a href="/">home</a>')),
      '/moved': (res) => res.writeHead(302, { location: `http://portal.test:${blockedPort}/landing` }).end(),
    };
    site = http.createServer((req, res) => {
      requests.push(req.url!);
      const route = routes[req.url!];
      if (route) route(res);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    sitePort = (site.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => infrastructure.close(() => resolve()));
    site.closeAllConnections();
    await new Promise<void>((resolve) => site.close(() => resolve()));
    removeTempDirs();
  });

  async function crawl(seed: string): Promise<{ code: number; stdout: string; stderr: string }> {
    const out = tempDir('refused-ports-');
    const args = [CLI, seed, '--resolve', 'portal.test=127.0.0.1', '--allow-private', '--scope', 'host', '--delay', '0.05', '--out', out, '--json'];
    const env = {
      ...process.env,
      REDIS_URL: '',
      S3_URL: '',
      SITEMAP_MODE: 'off',
      URL_FILTER_BLOCKED_PORTS: [...DEFAULT_BLOCKED_PORTS, blockedPort].join(','),
      // Were a robots.txt there refused by the listener, the host would not wait 10 minutes for a retry.
      DOWNLOADER_ROBOTS_ERROR_TTL_MS: '100',
    };
    try {
      const { stdout, stderr } = await run(process.execPath, args, { env, timeout: 60_000 });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }

  it('crawls the site, drops the links and the redirect to the refused ports as filtered.port, and connects there never', async () => {
    const { code, stdout, stderr } = await crawl(`http://portal.test:${sitePort}/`);
    expect({ code, stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    expect(connections).toBe(0);
    const summary = JSON.parse(stdout);
    expect(summary.complete).toBe(true);
    expect([...requests].sort()).toEqual(['/', '/a', '/moved', '/robots.txt']);
    // Three links to the listener's port (http and https), one to SMTP's, and the redirect target.
    expect(summary.totals['filtered.port']).toBe(5);
  }, 90_000);

  it('refuses a seed on a refused port at submission, naming the port, before any request', async () => {
    requests.length = 0;
    const { code, stderr } = await crawl(`http://portal.test:${blockedPort}/`);
    expect(connections).toBe(0);
    expect(code).toBe(2);
    expect(stderr).toContain(`crawl: bad seeds: "http://portal.test:${blockedPort}/" (port ${blockedPort} is in URL_FILTER_BLOCKED_PORTS`);
    expect(requests).toEqual([]);
  }, 90_000);
});
