import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Redis from 'ioredis';
import { MinioContentStore } from '@crawler/content-store';
import { TestWeb } from '../web/test-web';
import { expectedStoredPages } from './crawl-expectations';
import { crawlFigures, FAST_RECOVERY_ENV, leftovers, startCluster, statusOrUndefined, waitFor } from '../support/crawl-faults';
import { readinessUntil } from '../support/outage-crawl';
import { freePort, PrivateRedis } from '../support/private-servers';
import { startService } from '../support/service-processes';
import { storedPages } from '../support/stored-pages';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { TestWebCluster } from '../support/test-web-cluster';

/**
 * Redis's memory, each case on a redis-server of its own. A Redis that evicts keys would lose the crawl
 * silently when it fills: every process refuses to start on one, naming the setting. A `noeviction` Redis
 * that fills mid-crawl refuses writes: the crawl pauses its intake, says so, and completes once memory is
 * raised, with nothing lost.
 */

const run = promisify(execFile);
const CLI = join(__dirname, '../../dist/apps/crawl/src/main.js');

afterAll(removeTempDirs);

describe('a Redis that evicts keys', () => {
  let redis: PrivateRedis;

  beforeAll(async () => {
    redis = new PrivateRedis(await freePort(), ['--appendonly', 'no', '--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru']);
    await redis.start();
  });
  afterAll(() => redis?.crash());

  it('is refused at start by a service, naming the setting and the fix', async () => {
    const started = startService('url-filter', { REDIS_URL: redis.url, CRAWLER_PREFIX: 'evicting', CRAWLER_DATA_DIR: tempDir('evicting-') });
    const error: Error = await started.then(
      () => new Error('url-filter started on an evicting Redis'),
      (e: Error) => e,
    );
    expect(error.message).toMatch(/url-filter exited with 2/);
    expect(error.message).toMatch(/refusing to start: .*maxmemory-policy allkeys-lru.*Set maxmemory-policy noeviction/);
  }, 60_000);

  it('is refused at start by the embedded crawl (--redis), exit 2', async () => {
    const dir = tempDir('evicting-cli-');
    const outcome = await run(process.execPath, [CLI, 'http://a.test/', '--redis', redis.url, '--prefix', 'evicting-cli', '--out', dir], { timeout: 60_000 }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
    );
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toMatch(/^crawl: refusing to start: the Redis at redis:\/\/127\.0\.0\.1:\d+ has maxmemory-policy allkeys-lru.*noeviction/m);
  }, 60_000);
});

describe('a noeviction Redis that fills mid-crawl', () => {
  let redis: PrivateRedis;
  let web: TestWeb;
  let cluster: TestWebCluster | undefined;

  beforeAll(async () => {
    redis = new PrivateRedis(await freePort(), ['--appendonly', 'no', '--maxmemory-policy', 'noeviction']);
    await redis.start();
    web = await TestWeb.start({ hosts: 30, seed: 31 });
  });
  afterAll(async () => {
    await cluster?.close();
    await web?.close();
    await redis?.crash();
  });

  it('pauses intake while full (readiness and status say so), completes once maxmemory is raised, nothing lost', async () => {
    const admin = new Redis(redis.url);
    const died: string[] = [];
    try {
      cluster = await startCluster(web, { env: { ...FAST_RECOVERY_ENV, REDIS_URL: redis.url, FRONTIER_MIN_DELAY_MS: '1000', REDIS_MEMORY_CHECK_MS: '200' } });
      for (const s of cluster.services) s.process.once('exit', () => died.push(s.name));
      await cluster.seed(web.seeds());
      const threshold = Math.round(web.expected.reachable.size / 4);
      await waitFor(cluster, (s) => (s.totals.fetched ?? 0) >= threshold, 60_000, `${threshold} pages fetched`, 100);

      // Full now: maxmemory just under what the crawl holds, so Redis refuses every write that needs memory
      // (OOM) from the work in flight, as a Redis that filled up does.
      const used = Number(/^used_memory:(\d+)/m.exec(await admin.info('memory'))![1]);
      const maxmemory = used - 64 * 1024;
      await admin.config('SET', 'maxmemory', String(maxmemory));
      const full = await waitFor(cluster, (s) => s.redisMemory?.full === true, 15_000, 'Redis memory reported full', 100);
      expect(full.complete).toBe(false);
      expect(full.waitingOn).toMatch(/Redis memory full: used [\d.]+ MiB of maxmemory [\d.]+ MiB; intake paused/);
      // The frontier reads memory on its own clock (REDIS_MEMORY_CHECK_MS): it says so within a few readings.
      const frontier = cluster.services.find((s) => s.name === 'frontier')!;
      expect(await readinessUntil(frontier.port, (r) => r.code === 503, 5000)).toEqual({ code: 503, failing: ['redis'] });

      // While full, nothing new is dispatched: once what was in flight has finished, the test web sees no URL
      // it had not seen for 3 s on end (a fetch whose result Redis refused is retried, so a page may be
      // requested again; one refused before its request makes that request on a later retry, which under load
      // can come seconds after the pause). A crawl still dispatching asks ~30 new URLs a second: it never goes
      // 3 s without one. The crawl's own totals cannot show it: Redis refuses to add to them meanwhile.
      expect(await quietFor(() => web.requestCountByUrl().size, 3000, 20_000)).toBe(true);
      // …and quiet because it is paused, not because it is done.
      expect(crawlFigures(web).lost).toBeGreaterThan(0);
      expect((await statusOrUndefined(cluster))?.complete).toBe(false);

      // Writes Redis refused while it was full (Redis counts them by error code).
      const refused = Number(/^errorstat_OOM:count=(\d+)/m.exec(await admin.info('errorstats'))?.[1] ?? 0);
      if (process.env.CRASH_REPORT === '1')
        process.stdout.write(
          `${JSON.stringify({ report: 'redis-full', usedBytes: used, maxmemory, oomRefusals: refused, urlsSeenWhenFull: web.requestCountByUrl().size })}\n`,
        );
      expect(refused).toBeGreaterThan(0);

      // Memory raised: the crawl resumes and completes, every page fetched once and stored, nothing failed.
      await admin.config('SET', 'maxmemory', '0');
      const status = await waitFor(cluster, (s) => s.complete || (s.pending === 0 && Object.keys(s.failed ?? {}).length > 0), 120_000, 'completion', 500);
      expect(died).toEqual([]);
      expect(leftovers(status).failed).toBe(0);
      expect(status.complete).toBe(true);
      const figures = crawlFigures(web);
      expect(figures.lostUrls).toEqual([]);
      const store = await MinioContentStore.connect({ url: cluster.s3Url, bucket: cluster.prefix });
      expect((await storedPages(store)).size).toBe(expectedStoredPages(web));
    } catch (error) {
      for (const s of cluster?.services ?? [])
        process.stderr.write(
          `--- ${s.name}\n${s.output
            .filter((l) => /"level":[456]0|Unhandled|EXECABORT|OOM/i.test(l))
            .slice(-10)
            .join('')}`,
        );
      throw error;
    } finally {
      admin.disconnect();
    }
  }, 240_000);
});

/** Whether `count()` stays the same for `quietMs` on end at some point within `withinMs`. */
async function quietFor(count: () => number, quietMs: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  let last = count();
  let since = Date.now();
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    const now = count();
    if (now !== last) [last, since] = [now, Date.now()];
    else if (Date.now() - since >= quietMs) return true;
  }
  return false;
}
