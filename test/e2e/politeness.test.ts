import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { LoggedRequest, TestWeb } from '../web/test-web';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { ASK_ONCE_ENV } from '../support/test-web-cluster';
import { IP_INTERVAL_MS, tooCloseRuns } from '../support/per-ip-pacing';

const run = promisify(execFile);
const CLI = join(__dirname, '../../dist/apps/crawl/src/main.js');
const FLOOR_MS = 100;
const MULTIPLIER = 4;

afterAll(removeTempDirs);

/** Requests to one host in arrival order, robots.txt included. */
const byHost = (web: TestWeb, host: string) => web.requests.filter((r) => r.host === host);
const gapAfter = (previous: LoggedRequest, next: LoggedRequest) => next.at - previous.endAt!;

/**
 * The frontier's politeness rules, each judged from the request times the test web recorded: adaptive
 * delay, 429 with Retry-After, 503 with exponential backoff, and hosts on one address paced together.
 */
describe('politeness, as the test web saw it', () => {
  let web: TestWeb;
  let summary: Record<string, any>;

  beforeAll(async () => {
    web = await TestWeb.start({
      hosts: 12,
      rateLimitedHosts: [
        { status: 429, retryAfterSeconds: 2, failures: 1 },
        { status: 503, failures: 3 },
      ],
      slowHosts: [{ delayMs: 120 }],
      sharedIpHosts: 4,
    });
    const dir = tempDir('politeness-');
    writeFileSync(join(dir, 'hosts'), web.hostsFile());
    const { stdout } = await run(
      process.execPath,
      [CLI, ...web.extraSeeds(), '--scope', 'any', '--delay', String(FLOOR_MS / 1000), '--hosts-file', join(dir, 'hosts'), '--allow-private', '--out', dir, '--json'],
      {
        env: {
          ...process.env,
          REDIS_URL: '',
          S3_URL: '',
          ...ASK_ONCE_ENV,
          FRONTIER_DELAY_MULTIPLIER: String(MULTIPLIER),
          FRONTIER_PER_IP_INTERVAL_MS: String(IP_INTERVAL_MS),
        },
        timeout: 120_000,
      },
    );
    summary = JSON.parse(stdout);
  }, 150_000);

  afterAll(() => web?.close());

  it('completes, every page of every host fetched with success in the end', () => {
    expect(summary.complete).toBe(true);
    const ok = new Set(web.requests.filter((r) => r.status === 200).map((r) => `${r.host}${r.path}`));
    for (const host of [...web.roles.rateLimited, ...web.roles.slow, ...web.roles.sharedIp]) {
      for (const path of ['/', '/p/1', '/p/2', '/p/3']) expect(ok).toContain(`${host}${path}`);
    }
  });

  it('honours Retry-After after a 429', () => {
    const [limited429] = web.roles.rateLimited;
    const requests = byHost(web, limited429);
    const i = requests.findIndex((r) => r.status === 429);
    expect(i).toBeGreaterThan(0);
    expect(gapAfter(requests[i], requests[i + 1])).toBeGreaterThanOrEqual(2000);
  });

  it('backs off exponentially after repeated 503s', () => {
    const requests = byHost(web, web.roles.rateLimited[1]);
    const gaps = requests.flatMap((r, i) => (r.status === 503 ? [gapAfter(r, requests[i + 1])] : []));
    expect(gaps).toHaveLength(3);
    expect(gaps[0]).toBeGreaterThanOrEqual(1000);
    expect(gaps[1]).toBeGreaterThanOrEqual(2000);
    expect(gaps[2]).toBeGreaterThanOrEqual(4000);
  });

  it('slows down for a slow host: each gap ≥ multiplier × the mean response time so far', () => {
    const requests = byHost(web, web.roles.slow[0]);
    expect(requests.length).toBeGreaterThanOrEqual(5);
    for (let i = 1; i < requests.length; i++) {
      const recent = requests.slice(Math.max(0, i - 5), i).map((r) => r.endAt! - r.at);
      const mean = recent.reduce((a, b) => a + b, 0) / recent.length;
      expect(gapAfter(requests[i - 1], requests[i])).toBeGreaterThanOrEqual(Math.max(FLOOR_MS, MULTIPLIER * mean) * 0.95);
    }
  });

  it('paces hosts that share an address together (once the address is known)', () => {
    const shared = web.requests.filter((r) => r.localAddress === '127.0.0.2');
    const firstOfHost = new Set(web.roles.sharedIp.map((host) => shared.find((r) => r.host === host)));
    const known = shared.filter((r) => !firstOfHost.has(r));
    expect(known.length).toBeGreaterThan(10);
    expect(tooCloseRuns(known)).toEqual([]);
  });
});
