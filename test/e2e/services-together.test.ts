import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { TestWeb } from '../web/test-web';
import { expectPoliteCompleteCrawl } from './crawl-expectations';
import { TestWebCluster } from '../support/test-web-cluster';

const DELAY_MS = 200;
const MAIN = join(__dirname, '../../dist/apps/crawl/src/services-main.js');

/**
 * Light stages sharing one process (`npm run start:services` with SERVICES), beside a downloader and the
 * control plane of their own: the same crawl as every service a process.
 */
describe('services run together in one process (SERVICES)', () => {
  const together = 'frontier+dns-resolver+content-parser+content-seen+url-extractor+url-filter+url-seen';
  let web: TestWeb;
  let cluster: TestWebCluster;
  let status: any;
  let health: any;
  let exitCodes: (number | null)[];

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 20 });
    cluster = await new TestWebCluster(web).start({ env: { FRONTIER_MIN_DELAY_MS: String(DELAY_MS) }, services: [together, 'downloader', 'control-plane'] });
    expect(await cluster.seed(web.seeds())).toBe(201);
    status = await cluster.until((s) => s.complete, 120_000, 500);
    health = await (await fetch(`http://127.0.0.1:${cluster.services[0].port}/health/live`)).json();
    exitCodes = await cluster.stopServices();
  }, 180_000);

  afterAll(async () => {
    await cluster?.close();
    await web?.close();
  });

  it('crawls to completion: every reachable allowed page once, politely', () => {
    expect(status.complete).toBe(true);
    expect(status.totals.fetched).toBe(web.expected.reachable.size);
    expectPoliteCompleteCrawl(web, { delayMs: DELAY_MS });
  });

  it('names the process after the services it runs, and drains them all on SIGTERM', () => {
    expect(health.service).toBe(together);
    expect(exitCodes).toEqual([0, 0, 0]);
  });

  it('refuses a name the service map does not hold, or none, naming SERVICES (exit 2)', () => {
    for (const services of ['frontier,fronteir', '']) {
      const run = spawnSync(process.execPath, [MAIN], { env: { ...process.env, SERVICES: services }, encoding: 'utf8' });
      expect({ services, status: run.status }).toEqual({ services, status: 2 });
      expect(run.stderr).toMatch(/SERVICES: /);
    }
    expect(spawnSync(process.execPath, [MAIN], { env: { ...process.env, SERVICES: 'fronteir' }, encoding: 'utf8' }).stderr).toContain('"fronteir"');
  });
});
