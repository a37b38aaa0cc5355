import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestWeb } from '../web/test-web';
import { DOWNLOADER_APART } from '../support/service-processes';
import { TestWebCluster } from '../support/test-web-cluster';
import { removeTempDirs, tempDir } from '../support/temp-dirs';

/** The frontier beside the light stages, the downloader and the control plane each a process of its own: each must read the file itself. */
const SERVICES = DOWNLOADER_APART;
const SITE_AGENT = 'SiteBot/1.0 (+http://127.0.0.1/bot)';

/**
 * Per-site settings in the distributed shape: SITE_SETTINGS_FILE given to every service, the frontier applying
 * the site's page budget, the downloader (another process) its user agent, the control plane listing them.
 */
describe('distributed crawl with per-site settings', () => {
  let web: TestWeb;
  let cluster: TestWebCluster;
  let status: any;
  let listed: any;
  let site: string;

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 12 });
    site = web.hostNames[0];
    const file = join(tempDir('site-settings-distributed-'), 'sites.yaml');
    writeFileSync(file, `sites:\n  ${site}:\n    maxPages: 2\n    userAgent: "${SITE_AGENT}"\n`);
    cluster = await new TestWebCluster(web).start({
      env: { FRONTIER_MIN_DELAY_MS: '50', SITEMAP_MODE: 'off', SITE_SETTINGS_FILE: file },
      services: SERVICES,
      startTimeoutMs: 90_000,
    });
    expect(await cluster.seed(web.seeds())).toBe(201);
    status = await cluster.until((s) => s.complete, 120_000, 500);
    listed = await (await fetch(`${cluster.control}/sites?host=${site}`)).json();
  }, 200_000);

  afterAll(async () => {
    await cluster?.close();
    await web?.close();
    removeTempDirs();
  });

  it("fetches the site's hosts its 2 pages, with its user agent, and the others as usual", () => {
    expect(status.complete).toBe(true);
    const pages = (host: string) => web.requests.filter((r) => r.host === host && r.path !== '/robots.txt');
    expect(pages(site)).toHaveLength(2);
    expect(pages(site).map((r) => r.userAgent)).toEqual([SITE_AGENT, SITE_AGENT]);
    const robots = web.requests.find((r) => r.host === site && r.path === '/robots.txt')!;
    expect(robots.userAgent).not.toBe(SITE_AGENT);
    const others = web.hostNames.slice(1).flatMap(pages);
    expect(others.length).toBeGreaterThan(2);
    expect(others.every((r) => r.userAgent === robots.userAgent)).toBe(true);
    // The site had more to give: the budget is what stopped it.
    expect([...web.expected.reachable].filter((url) => new URL(url).hostname === site).length).toBeGreaterThan(2);
  });

  it('lists the settings through the control plane', () => {
    expect(listed).toEqual({ host: site, settings: { maxPages: 2, userAgent: SITE_AGENT }, patterns: [site] });
  });
});
