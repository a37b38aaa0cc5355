import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { S3TestServer, startS3TestServer } from '@crawler/content-store';
import { TestWeb } from '../web/test-web';
import { expectPoliteCompleteCrawl } from './crawl-expectations';
import { clearPrefix, REDIS_URL } from '../support/redis-prefix';
import { RunningService, SERVICES, startService, stopService } from '../support/service-processes';
import { removeTempDirs, tempDir } from '../support/temp-dirs';

const DELAY_MS = 200;

afterAll(removeTempDirs);

/**
 * The frontier's state lives in Redis and every step of it is atomic: kill -9 the frontier in the middle
 * of a distributed crawl, start it again, and the crawl completes with every page fetched exactly once.
 */
describe('frontier killed with SIGKILL mid-crawl', () => {
  const prefix = `crash-${randomBytes(4).toString('hex')}`;
  let web: TestWeb;
  let s3: S3TestServer;
  let services: RunningService[] = [];
  let fetchedAtKill = 0;
  let status: any;

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 60, seed: 3 });
    s3 = await startS3TestServer();
    const hostsFile = join(tempDir('crash-'), 'hosts');
    writeFileSync(hostsFile, web.hostsFile());
    const env = {
      REDIS_URL,
      S3_URL: s3.url,
      S3_BUCKET: prefix,
      CRAWLER_PREFIX: prefix,
      DNS_HOSTS_FILE: hostsFile,
      DNS_ALLOW_PRIVATE: 'true',
      URL_FILTER_SCOPE: 'any',
      URL_FILTER_MAX_DEPTH: '1000',
      FRONTIER_MIN_DELAY_MS: String(DELAY_MS),
      // Fast recovery for the test, in the production proportions: a lease outlives the stall check, so
      // an outcome held by the dead frontier is handed to the new one before its URL's lease runs out.
      QUEUE_STALLED_MS: '3000',
      DOWNLOADER_TOTAL_TIMEOUT_MS: '5000',
      FRONTIER_LEASE_MS: '15000',
    };
    services = await Promise.all(SERVICES.map((name) => startService(name, env)));
    const control = `http://127.0.0.1:${services.find((s) => s.name === 'control-plane')!.port}`;
    await fetch(`${control}/seeds`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ urls: web.seeds() }) });
    const getStatus = async () => (await fetch(`${control}/status`)).json();
    do {
      await new Promise((r) => setTimeout(r, 100));
      status = await getStatus();
    } while ((status.totals.fetched ?? 0) < 80);

    const i = services.findIndex((s) => s.name === 'frontier');
    fetchedAtKill = status.totals.fetched;
    services[i].process.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 500));
    services[i] = await startService('frontier', env);

    const deadline = Date.now() + 150_000;
    do {
      await new Promise((r) => setTimeout(r, 500));
      status = await getStatus();
    } while (!status.complete && Date.now() < deadline);
  }, 240_000);

  afterAll(async () => {
    await Promise.all(services.map((s) => stopService(s, 5000)));
    await clearPrefix(prefix);
    await s3?.close();
    await web?.close();
  });

  it('was killed mid-crawl', () => {
    expect(fetchedAtKill).toBeGreaterThan(0);
    expect(fetchedAtKill).toBeLessThan(web.expected.reachable.size);
  });

  it('completes after the restart with no URL lost and none fetched twice, politely', () => {
    expect(status.complete).toBe(true);
    expectPoliteCompleteCrawl(web, { delayMs: DELAY_MS });
  });
});
