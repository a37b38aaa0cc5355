import { SHARED_ADDRESS, TestWeb } from '../web/test-web';
import { DOWNLOADER_APART } from '../support/service-processes';
import { TestWebCluster } from '../support/test-web-cluster';
import { ARRIVAL_JITTER_MS, IP_INTERVAL_MS, tooCloseRuns } from '../support/per-ip-pacing';

/** Twenty sites (twenty registrable domains, shared-N.test) on one address. */
const SHARED_HOSTS = 20;
/** The light stages in one process beside a downloader and the control plane: the Redis frontier (its Lua scripts), BullMQ between them. */
const SERVICES = DOWNLOADER_APART;

/**
 * The distributed shape of per-ip-allowance.test.ts: the frontier's state in Redis, paced by its scripts, the
 * downloader a process of its own. The web server sees an address of few domains held to the base per-IP rule,
 * one of many domains given the grown allowance.
 */
describe('per-IP allowance grown with the domains on an address, as the test web saw it (distributed)', () => {
  let web: TestWeb;

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 12, sharedIpHosts: SHARED_HOSTS });
  }, 60_000);

  afterAll(() => web?.close());

  async function crawlSharedAddress(domainsPerStep: number) {
    web.reset();
    const cluster = new TestWebCluster(web);
    try {
      await cluster.start({
        env: {
          FRONTIER_MIN_DELAY_MS: '50',
          FRONTIER_PER_IP_LIMIT: '1',
          FRONTIER_PER_IP_INTERVAL_MS: String(IP_INTERVAL_MS),
          FRONTIER_PER_IP_DOMAINS_PER_STEP: String(domainsPerStep),
          SITEMAP_MODE: 'off',
        },
        services: SERVICES,
      });
      const [first] = web.extraSeeds();
      expect(await cluster.seed(web.roles.sharedIp.map((host) => first.replace(web.roles.sharedIp[0], host)))).toBe(201);
      const status = await cluster.until((s) => s.complete, 120_000, 500);
      const shared = web.requests.filter((r) => r.localAddress === SHARED_ADDRESS);
      const gaps = shared.slice(1).map((r, i) => Math.round(r.at - shared[i].at));
      return { status, shared, gaps, maxInFlight: web.maxConcurrentByAddress().get(SHARED_ADDRESS) };
    } finally {
      await cluster.close();
    }
  }

  it('holds a shared server of few domains (20, one step of 20) to the base interval and limit', async () => {
    const { status, shared, maxInFlight } = await crawlSharedAddress(20);
    expect(status.complete).toBe(true);
    expect(shared.filter((r) => r.path === '/' && r.status === 200)).toHaveLength(SHARED_HOSTS);
    expect(maxInFlight).toBe(1);
    expect(tooCloseRuns(shared)).toEqual([]);
  }, 180_000);

  it('grows the allowance of an address of many domains (20, steps of 4: five times the base, 60 ms apart, 5 in flight)', async () => {
    const { status, shared, gaps, maxInFlight } = await crawlSharedAddress(4);
    expect(status.complete).toBe(true);
    expect(shared.filter((r) => r.path === '/' && r.status === 200)).toHaveLength(SHARED_HOSTS);
    expect(maxInFlight).toBeLessThanOrEqual(5);
    expect(gaps.filter((gap) => gap < IP_INTERVAL_MS - ARRIVAL_JITTER_MS).length).toBeGreaterThan(gaps.length / 2);
  }, 180_000);
});
