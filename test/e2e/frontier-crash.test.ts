import { TestWeb } from '../web/test-web';
import { expectPoliteCompleteCrawl } from './crawl-expectations';
import { startService } from '../support/service-processes';
import { TestWebCluster } from '../support/test-web-cluster';

const DELAY_MS = 200;

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
    let web: TestWeb;
    let cluster: TestWebCluster;
    let fetchedAtKill = 0;
    let status: any;

    beforeAll(async () => {
      web = await TestWeb.start({ hosts: 60, seed: 3 });
      cluster = await new TestWebCluster(web).start({
        extra,
        env: {
          FRONTIER_MIN_DELAY_MS: String(DELAY_MS),
          // Fast recovery for the test, in the production proportions: a lease outlives both the fetch
          // timeout and the stall check, so work held by a dead process is recovered before its lease ends.
          QUEUE_STALLED_MS: '3000',
          DOWNLOADER_TOTAL_TIMEOUT_MS: '5000',
          DOWNLOADER_HEARTBEAT_MS: '500',
          FRONTIER_LEASE_MS: '15000',
        },
      });
      await cluster.seed(web.seeds());
      status = await cluster.until((s) => (s.totals.fetched ?? 0) >= 80, 120_000, 100);

      const i = cluster.services.findIndex((s) => s.name === victim);
      fetchedAtKill = status.totals.fetched;
      cluster.services[i].process.kill('SIGKILL');
      if (restart) {
        await new Promise((r) => setTimeout(r, 500));
        cluster.services[i] = await startService(victim, cluster.env);
      }
      status = await cluster.until((s) => s.complete, 150_000, 500);
    }, 240_000);

    afterAll(async () => {
      await cluster?.close();
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
    // An outcome that comes after its lease was reclaimed is dropped (stale). The victim's last outcomes, sent
    // before the kill, come so when the frontier is behind them by more than the ring's expiry (a loaded
    // machine); each is one of its fetches in flight, refetched: within the same bound.
    expect(status.totals['frontier.stale-outcome'] ?? 0).toBeLessThanOrEqual(64);
  },
});
