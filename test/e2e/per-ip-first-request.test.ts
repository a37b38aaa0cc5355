import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SHARED_ADDRESS, TestWeb } from '../web/test-web';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { ASK_ONCE_ENV } from '../support/test-web-cluster';
import { IP_INTERVAL_MS, tooCloseRuns } from '../support/per-ip-pacing';

const run = promisify(execFile);
const CLI = join(__dirname, '../../dist/apps/crawl/src/main.js');
const SHARED_HOSTS = 20;

afterAll(removeTempDirs);

/**
 * Twenty sites on one server, none fetched before, all seeded at once, with FRONTIER_PER_IP_LIMIT=1 and a per-IP
 * interval: the server must never see two requests at once, nor two closer than the interval,
 * not even the sites' first requests (their robots.txt), which go out before any fetch has reported the address.
 */
describe('per-IP limit from each host’s first request, as the test web saw it', () => {
  let web: TestWeb;
  let summary: Record<string, any>;

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 12, sharedIpHosts: SHARED_HOSTS });
    const [first] = web.extraSeeds();
    const seeds = web.roles.sharedIp.map((host) => first.replace(web.roles.sharedIp[0], host));
    const dir = tempDir('per-ip-');
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
        },
        timeout: 120_000,
      },
    );
    summary = JSON.parse(stdout);
  }, 150_000);

  afterAll(() => web?.close());

  it('fetches every shared host, one request at a time on their address', () => {
    expect(summary.complete).toBe(true);
    const shared = web.requests.filter((r) => r.localAddress === SHARED_ADDRESS);
    for (const host of web.roles.sharedIp) {
      expect(shared.some((r) => r.host === host && r.path === '/robots.txt')).toBe(true);
      expect(shared.some((r) => r.host === host && r.path === '/' && r.status === 200)).toBe(true);
    }
    expect(web.maxConcurrentByAddress().get(SHARED_ADDRESS)).toBe(1);
  });

  it('spaces every request to the shared address by the per-IP interval, first requests included', () => {
    const shared = web.requests.filter((r) => r.localAddress === SHARED_ADDRESS);
    expect(tooCloseRuns(shared)).toEqual([]);
  });
});
