import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net, { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { TestWebCluster } from '../support/test-web-cluster';
import { removeTempDirs, tempDir } from '../support/temp-dirs';

const run = promisify(execFile);
const CLI = join(__dirname, '../../dist/apps/crawl/src/main.js');

/** Whether this machine can bind 127.0.0.2 (Linux routes all of 127/8 to lo; macOS does not by default). */
async function canBind(host: string): Promise<boolean> {
  const probe = net.createServer();
  return new Promise((resolve) => {
    probe.once('error', () => resolve(false));
    probe.listen(0, host, () => probe.close(() => resolve(true)));
  });
}

/**
 * A site whose name has two addresses in the machine's hosts file (DNS_SYSTEM_HOSTS_FILE): 127.0.0.3 first,
 * where nothing listens, then 127.0.0.2, where the site does. Both shapes must crawl it through the second,
 * count the failover and name 127.0.0.2 as the address each request went to.
 */
describe('a name whose first address refuses connections', () => {
  const requests: string[] = [];
  let site: http.Server;
  let port: number;
  let hostsFile: string;
  let bindable = false;

  beforeAll(async () => {
    bindable = await canBind('127.0.0.2');
    if (!bindable) return;
    const html = (body: string) => `<!doctype html><html><head><title>two</title></head><body>${body}</body></html>`;
    const routes: Record<string, (res: http.ServerResponse) => void> = {
      '/robots.txt': (res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n'),
      '/': (res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html('<a href="/a">a</a>')),
      '/a': (res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html('<a href="/">home</a>')),
    };
    site = http.createServer((req, res) => {
      requests.push(req.url!);
      const route = routes[req.url!];
      if (route) route(res);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.2', resolve));
    port = (site.address() as AddressInfo).port;
    hostsFile = join(tempDir('address-failover-'), 'hosts');
    writeFileSync(hostsFile, '127.0.0.3 two.test\n127.0.0.2 two.test\n');
  });

  afterAll(async () => {
    if (site) {
      site.closeAllConnections();
      await new Promise<void>((resolve) => site.close(() => resolve()));
    }
    removeTempDirs();
  });

  it('is crawled through its second address in one process (crawl), the failover counted and the address logged', async () => {
    if (!bindable) return void console.warn('127.0.0.2 is not bindable here: skipping the failover crawl');
    requests.length = 0;
    const out = tempDir('address-failover-out-');
    const args = [CLI, `http://two.test:${port}/`, '--allow-private', '--scope', 'host', '--delay', '0.05', '--out', out, '--json'];
    const env = { ...process.env, REDIS_URL: '', S3_URL: '', SITEMAP_MODE: 'off', DNS_SYSTEM_HOSTS_FILE: hostsFile };
    const { stdout } = await run(process.execPath, args, { env, timeout: 60_000 });
    const summary = JSON.parse(stdout);
    expect(summary.complete).toBe(true);
    expect([...requests].sort()).toEqual(['/', '/a', '/robots.txt']);
    expect(summary.totals['fetch.address-failover']).toBeGreaterThanOrEqual(1);
    const log = readFileSync(join(out, 'fetch-log.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    expect(log.map((line) => [new URL(line.url).pathname, line.address]).sort()).toEqual([
      ['/', '127.0.0.2'],
      ['/a', '127.0.0.2'],
      ['/robots.txt', '127.0.0.2'],
    ]);
  }, 90_000);

  it('never tries an address the crawl may not reach, not even as a fallback', async () => {
    if (!bindable) return void console.warn('127.0.0.2 is not bindable here: skipping the refused-address crawl');
    requests.length = 0;
    const out = tempDir('address-failover-out-');
    // Without --allow-private, DNS_ALLOW_CIDRS lets the crawl reach 127.0.0.2 alone: 127.0.0.3 is refused.
    const args = [CLI, `http://two.test:${port}/`, '--scope', 'host', '--delay', '0.05', '--out', out, '--json'];
    const env = { ...process.env, REDIS_URL: '', S3_URL: '', SITEMAP_MODE: 'off', DNS_SYSTEM_HOSTS_FILE: hostsFile, DNS_ALLOW_CIDRS: '127.0.0.2/32' };
    const { stdout } = await run(process.execPath, args, { env, timeout: 60_000 });
    const summary = JSON.parse(stdout);
    expect(summary.complete).toBe(true);
    expect([...requests].sort()).toEqual(['/', '/a', '/robots.txt']);
    expect(summary.totals['fetch.address-failover']).toBeUndefined();
  }, 90_000);

  it('is crawled through its second address with every service its own process, the failover counted', async () => {
    if (!bindable) return void console.warn('127.0.0.2 is not bindable here: skipping the failover crawl');
    requests.length = 0;
    const cluster = await new TestWebCluster({ hostsFile: () => '' }).start({
      env: { FRONTIER_MIN_DELAY_MS: '50', SITEMAP_MODE: 'off', DNS_SYSTEM_HOSTS_FILE: hostsFile },
      startTimeoutMs: 90_000,
    });
    try {
      expect(await cluster.seed([`http://two.test:${port}/`])).toBe(201);
      const status = await cluster.until((s) => s.complete, 120_000, 500);
      expect(status.complete).toBe(true);
      expect([...requests].sort()).toEqual(['/', '/a', '/robots.txt']);
      expect(status.totals['fetch.address-failover']).toBeGreaterThanOrEqual(1);
      const downloader = cluster.services.find((s) => s.name.includes('downloader'))!.output.join('');
      expect(downloader).toContain('"event":"address-failover"');
      expect(downloader).toContain('"to":"127.0.0.2"');
    } finally {
      await cluster.close();
    }
  }, 200_000);
});
