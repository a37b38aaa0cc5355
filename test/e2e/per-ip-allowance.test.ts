import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SHARED_ADDRESS, TestWeb } from '../web/test-web';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { ASK_ONCE_ENV } from '../support/test-web-cluster';
import { ARRIVAL_JITTER_MS, IP_INTERVAL_MS, tooCloseRuns } from '../support/per-ip-pacing';

const run = promisify(execFile);
const CLI = join(__dirname, '../../dist/apps/crawl/src/main.js');
/** Twenty sites (twenty registrable domains, shared-N.test) on one address. */
const SHARED_HOSTS = 20;

afterAll(removeTempDirs);

/** Crawls the twenty shared sites with FRONTIER_PER_IP_LIMIT=1 and a 300 ms per-IP interval; answers what their address saw. */
async function crawlSharedAddress(web: TestWeb, env: Record<string, string>) {
  web.reset();
  const [first] = web.extraSeeds();
  const seeds = web.roles.sharedIp.map((host) => first.replace(web.roles.sharedIp[0], host));
  const dir = tempDir('per-ip-allowance-');
  writeFileSync(join(dir, 'hosts'), web.hostsFile());
  const { stdout } = await run(
    process.execPath,
    [CLI, ...seeds, '--scope', 'any', '--delay', '0.05', '--hosts-file', join(dir, 'hosts'), '--allow-private', '--out', dir, '--json'],
    {
      env: {
        ...process.env,
        REDIS_URL: '',
        S3_URL: '',
        ...ASK_ONCE_ENV,
        FRONTIER_PER_IP_LIMIT: '1',
        FRONTIER_PER_IP_INTERVAL_MS: String(IP_INTERVAL_MS),
        SITEMAP_MODE: 'off',
        ...env,
      },
      timeout: 120_000,
    },
  );
  const shared = web.requests.filter((r) => r.localAddress === SHARED_ADDRESS);
  const gaps = shared.slice(1).map((r, i) => Math.round(r.at - shared[i].at));
  return { summary: JSON.parse(stdout), shared, gaps, maxInFlight: web.maxConcurrentByAddress().get(SHARED_ADDRESS) };
}

/**
 * The per-IP allowance as the web server saw it: an address of few domains keeps the base rule (one request at a
 * time, 300 ms apart), one of many domains gets ⌈domains / FRONTIER_PER_IP_DOMAINS_PER_STEP⌉ times it.
 */
describe('per-IP allowance grown with the domains on an address, as the test web saw it (embedded)', () => {
  let web: TestWeb;

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 12, sharedIpHosts: SHARED_HOSTS });
  }, 60_000);

  afterAll(() => web?.close());

  it('holds a shared server of few domains (20, one step of 20) to the base interval and limit', async () => {
    const { summary, shared, maxInFlight } = await crawlSharedAddress(web, { FRONTIER_PER_IP_DOMAINS_PER_STEP: '20' });
    expect(summary.complete).toBe(true);
    expect(shared.filter((r) => r.path === '/' && r.status === 200)).toHaveLength(SHARED_HOSTS);
    expect(maxInFlight).toBe(1);
    expect(tooCloseRuns(shared)).toEqual([]);
  }, 150_000);

  it('grows the allowance of an address of many domains (20, steps of 4: five times the base, 60 ms apart, 5 in flight)', async () => {
    const { summary, shared, gaps, maxInFlight } = await crawlSharedAddress(web, { FRONTIER_PER_IP_DOMAINS_PER_STEP: '4' });
    expect(summary.complete).toBe(true);
    expect(shared.filter((r) => r.path === '/' && r.status === 200)).toHaveLength(SHARED_HOSTS);
    expect(maxInFlight).toBeLessThanOrEqual(5);
    // Most requests now follow the previous one closer than the base rule allows.
    expect(gaps.filter((gap) => gap < IP_INTERVAL_MS - ARRIVAL_JITTER_MS).length).toBeGreaterThan(gaps.length / 2);
  }, 150_000);

  it('lifts the per-IP rule on an address named a CDN edge (FRONTIER_PER_IP_CDN_CIDRS), and keeps it on one named strict', async () => {
    const cdn = await crawlSharedAddress(web, { FRONTIER_PER_IP_DOMAINS_PER_STEP: '20', FRONTIER_PER_IP_CDN_CIDRS: `${SHARED_ADDRESS}/32` });
    expect(cdn.summary.complete).toBe(true);
    expect(cdn.gaps.filter((gap) => gap < IP_INTERVAL_MS - ARRIVAL_JITTER_MS).length).toBeGreaterThan(cdn.gaps.length / 2);
    const strict = await crawlSharedAddress(web, {
      FRONTIER_PER_IP_DOMAINS_PER_STEP: '4',
      FRONTIER_PER_IP_CDN_CIDRS: '127.0.0.0/8',
      FRONTIER_PER_IP_STRICT_CIDRS: `${SHARED_ADDRESS}/32`,
    });
    expect(strict.summary.complete).toBe(true);
    expect(strict.maxInFlight).toBe(1);
    expect(tooCloseRuns(strict.shared)).toEqual([]);
  }, 300_000);
});
