import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestWeb } from '../web/test-web';
import { ForwardProxy } from '../support/forward-proxy';
import { DOWNLOADER_APART } from '../support/service-processes';
import { TestWebCluster } from '../support/test-web-cluster';
import { removeTempDirs, tempDir } from '../support/temp-dirs';

/** The downloader a process of its own: it must read the file, the credentials' variable and warn by itself. */
const SERVICES = DOWNLOADER_APART;
const SECRET = 'crawler:distributed-s3cret';

/**
 * A site's proxy in the distributed shape: SITE_SETTINGS_FILE given to every service, the downloader (another
 * process) sending that site's requests, robots.txt's included, through a forward proxy on loopback with the
 * credentials of a variable, the other sites straight there; the control plane listing the settings without them.
 */
describe('distributed crawl with a site behind a proxy', () => {
  let web: TestWeb;
  let proxy: ForwardProxy;
  let cluster: TestWebCluster;
  let status: any;
  let listed: any;
  let site: string;

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 12 });
    proxy = await ForwardProxy.start({ credentials: SECRET });
    site = web.hostNames[0];
    const file = join(tempDir('proxy-tls-distributed-'), 'sites.yaml');
    const settings = [
      'sites:',
      `  ${site}:`,
      `    proxy: {url: "${proxy.url}", credentialsEnv: SITE_PROXY_CREDENTIALS}`,
      '  staging.internal.test:',
      '    tls: {insecureSkipVerify: true}',
    ];
    writeFileSync(file, `${settings.join('\n')}\n`);
    cluster = await new TestWebCluster(web).start({
      env: { FRONTIER_MIN_DELAY_MS: '50', SITEMAP_MODE: 'off', SITE_SETTINGS_FILE: file, SITE_PROXY_CREDENTIALS: SECRET },
      services: SERVICES,
      startTimeoutMs: 90_000,
    });
    expect(await cluster.seed(web.seeds())).toBe(201);
    status = await cluster.until((s) => s.complete, 120_000, 500);
    listed = await (await fetch(`${cluster.control}/sites`)).json();
  }, 200_000);

  afterAll(async () => {
    await cluster?.close();
    await proxy?.close();
    await web?.close();
    removeTempDirs();
  });

  it("sends the site's requests through its proxy to the vetted address, and the other sites' straight there", () => {
    expect(status.complete).toBe(true);
    const mine = web.requests.filter((r) => r.host === site);
    expect(mine.filter((r) => r.path === '/robots.txt')).toHaveLength(1);
    expect(mine.length).toBeGreaterThan(1);
    expect(mine.every((r) => proxy.carried(r.remotePort))).toBe(true);
    const others = web.requests.filter((r) => r.host !== site);
    expect(others.length).toBeGreaterThan(mine.length);
    expect(others.some((r) => proxy.carried(r.remotePort))).toBe(false);
    // Politeness is the site's, as without a proxy: its requests at least FRONTIER_MIN_DELAY_MS apart.
    expect(web.minIntervalMs(site)).toBeGreaterThanOrEqual(50);
    // Asked for addresses, never names, each time with the credentials.
    expect(proxy.tunnels.length).toBeGreaterThan(0);
    for (const tunnel of proxy.tunnels) expect(tunnel).toMatchObject({ target: expect.stringMatching(/^127\.0\.0\.[12]:\d+$/), credentials: SECRET, status: 200 });
  });

  it('warns at the downloader start of the site that skips certificate checks, and logs no credential anywhere', () => {
    const downloader = cluster.services.find((s) => s.name === 'downloader')!.output.join('');
    expect(downloader).toContain('TLS CERTIFICATES ARE NOT CHECKED for \\"staging.internal.test\\"');
    const everything = cluster.services.flatMap((s) => s.output).join('');
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain(Buffer.from(SECRET).toString('base64'));
  });

  it('lists the settings through the control plane: where the credentials come from, not what they are', () => {
    expect(listed.file).toEqual([
      { pattern: site, settings: { proxy: { url: proxy.url, credentialsEnv: 'SITE_PROXY_CREDENTIALS' } }, at: expect.any(String) },
      { pattern: 'staging.internal.test', settings: { tls: { insecureSkipVerify: true } }, at: expect.any(String) },
    ]);
    expect(JSON.stringify(listed)).not.toContain('s3cret');
  });
});
