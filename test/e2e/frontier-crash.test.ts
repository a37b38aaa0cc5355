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

interface Scenario {
  title: string;
  /** Extra processes started beside one of each service. */
  extra: string[];
  /** The service killed with SIGKILL once 80 pages are fetched. */
  victim: string;
  restart: boolean;
  check: (web: TestWeb, status: any) => void;
}

/**
 * A distributed crawl (every service its own process) in which one process is killed with SIGKILL
 * mid-crawl. The frontier's state and leases live in Redis, so the crawl completes.
 */
function crashScenario({ title, extra, victim, restart, check }: Scenario) {
  describe(title, () => {
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
        // Fast recovery for the test, in the production proportions: a lease outlives both the fetch
        // timeout and the stall check, so work held by a dead process is recovered before its lease ends.
        QUEUE_STALLED_MS: '3000',
        DOWNLOADER_TOTAL_TIMEOUT_MS: '5000',
        DOWNLOADER_HEARTBEAT_MS: '500',
        FRONTIER_LEASE_MS: '15000',
      };
      services = await Promise.all([...SERVICES, ...extra].map((name) => startService(name, env)));
      const control = `http://127.0.0.1:${services.find((s) => s.name === 'control-plane')!.port}`;
      await fetch(`${control}/seeds`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ urls: web.seeds() }) });
      const getStatus = async () => (await fetch(`${control}/status`)).json();
      do {
        await new Promise((r) => setTimeout(r, 100));
        status = await getStatus();
      } while ((status.totals.fetched ?? 0) < 80);

      const i = services.findIndex((s) => s.name === victim);
      fetchedAtKill = status.totals.fetched;
      services[i].process.kill('SIGKILL');
      if (restart) {
        await new Promise((r) => setTimeout(r, 500));
        services[i] = await startService(victim, env);
      }
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

    it('completes with no URL lost, politely', () => {
      expect(status.complete).toBe(true);
      check(web, status);
    });
  });
}

crashScenario({
  title: 'frontier killed with SIGKILL mid-crawl and restarted',
  extra: [],
  victim: 'frontier',
  restart: true,
  // Nothing is lost and, since the frontier's every step is atomic and its batches idempotent, nothing repeats.
  check: (web) => expectPoliteCompleteCrawl(web, { delayMs: DELAY_MS }),
});

crashScenario({
  title: 'one of two downloaders killed with SIGKILL mid-crawl, for good',
  extra: ['downloader'],
  victim: 'downloader',
  restart: false,
  check: (web, status) => {
    const counts = web.requestCountByUrl();
    // Its hosts move to the survivor: every page is fetched…
    expect([...web.expected.reachable].filter((url) => !counts.has(url))).toEqual([]);
    expect([...web.expected.disallowed].filter((url) => counts.has(url))).toEqual([]);
    // …at most its fetches in flight at the kill twice (fetched, but their outcomes died with it)…
    const twice = [...web.expected.reachable].filter((url) => (counts.get(url) ?? 0) > 1);
    expect(twice.length).toBeLessThanOrEqual(64);
    // …and its hosts wait out a fetch it might still have been making: never two requests closer than the delay.
    const tooClose = [...web.minIntervalByHost()].filter(([host, gap]) => gap < Math.max(DELAY_MS, (web.expected.crawlDelay.get(host) ?? 0) * 1000));
    expect(tooClose).toEqual([]);
    expect(status.totals['frontier.stale-outcome'] ?? 0).toBe(0);
  },
});
