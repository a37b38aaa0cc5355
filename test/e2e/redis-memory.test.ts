import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
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
import { ASK_ONCE_ENV, ONE_ADDRESS_ENV, ROBOTS_ERROR_TTL_MS, ROBOTS_UNREACHABLE_MAX_MS, TestWebCluster } from '../support/test-web-cluster';

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

describe('a noeviction Redis too small for the URL-seen Bloom filter', () => {
  let redis: PrivateRedis;

  beforeAll(async () => {
    // The default filter (10⁷ URLs at 0.1 %) takes 17 MiB: it cannot fit.
    redis = new PrivateRedis(await freePort(), ['--appendonly', 'no', '--maxmemory', '16mb', '--maxmemory-policy', 'noeviction']);
    await redis.start();
  });
  afterAll(() => redis?.crash());

  const NAMES_THE_SETTINGS =
    /refusing to start: URL-seen's Bloom filter \(URL_SEEN_EXPECTED_URLS 10000000 at URL_SEEN_FALSE_POSITIVE_RATE 0\.001\) takes 17\.1 MiB more of the Redis at redis:\/\/127\.0\.0\.1:\d+, which has maxmemory 16\.0 MiB .*raise maxmemory to at least/;

  it('is refused at start by the embedded crawl (--redis), exit 2, naming the settings that size the filter', async () => {
    const dir = tempDir('small-redis-cli-');
    const outcome = await run(process.execPath, [CLI, 'http://a.test/', '--redis', redis.url, '--prefix', 'small-redis-cli', '--out', dir], { timeout: 60_000 }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
    );
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toMatch(new RegExp(`^crawl: ${NAMES_THE_SETTINGS.source}`, 'm'));
  }, 60_000);

  it('is refused at start by the url-seen service, exit 2', async () => {
    const started = startService('url-seen', { REDIS_URL: redis.url, CRAWLER_PREFIX: 'small-redis', CRAWLER_DATA_DIR: tempDir('small-redis-') });
    const error: Error = await started.then(
      () => new Error('url-seen started on a Redis too small for its filter'),
      (e: Error) => e,
    );
    expect(error.message).toMatch(/url-seen exited with 2/);
    expect(error.message).toMatch(NAMES_THE_SETTINGS);
  }, 60_000);
});

describe('the embedded crawl (--redis) on a noeviction Redis that fills mid-crawl', () => {
  const MAXMEMORY = 48 * 1024 * 1024;
  const prefix = 'filled-cli';
  let redis: PrivateRedis;
  let web: TestWeb;

  beforeAll(async () => {
    redis = new PrivateRedis(await freePort(), ['--appendonly', 'no', '--maxmemory', String(MAXMEMORY), '--maxmemory-policy', 'noeviction']);
    await redis.start();
    web = await TestWeb.start({ hosts: 20, seed: 32 });
  });
  afterAll(async () => {
    await web?.close();
    await redis?.crash();
  });

  it('waits while Redis refuses writes (OOM), saying so, and completes once memory is freed, every page fetched', async () => {
    const admin = new Redis(redis.url);
    const dir = tempDir('filled-cli-');
    writeFileSync(join(dir, 'hosts'), web.hostsFile());
    const args = [...web.seeds(), '--scope', 'any', '--max-depth', '1000', '--delay', '0.3', '--hosts-file', join(dir, 'hosts'), '--allow-private'];
    const crawl = spawn(process.execPath, [CLI, ...args, '--redis', redis.url, '--prefix', prefix, '--out', dir, '--json'], {
      env: {
        ...process.env,
        ...ONE_ADDRESS_ENV,
        ...ASK_ONCE_ENV,
        ...FAST_RECOVERY_ENV,
        QUEUE_INFRA_BACKOFF_MAX_MS: '2000',
        DOWNLOADER_ROBOTS_ERROR_TTL_MS: ROBOTS_ERROR_TTL_MS,
        DOWNLOADER_ROBOTS_UNREACHABLE_MAX_MS: ROBOTS_UNREACHABLE_MAX_MS,
        URL_SEEN_EXPECTED_URLS: '100000',
        REDIS_MEMORY_CHECK_MS: '200',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    crawl.stdout.on('data', (chunk) => (stdout += chunk));
    crawl.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => crawl.once('close', resolve));
    try {
      const fetched = async () => Number((await admin.hget(`${prefix}:stats:totals`, 'fetched')) ?? 0);
      const threshold = Math.round(web.expected.reachable.size / 4);
      await until(async () => (await fetched()) >= threshold, 60_000, `${threshold} pages fetched`);

      // Full: one key takes what is left of maxmemory (a write is let through while Redis is under it), so
      // every write that needs memory after it is refused (OOM).
      const used = Number(/^used_memory:(\d+)/m.exec(await admin.info('memory'))![1]);
      await admin.setrange('filler', MAXMEMORY - used + 1024 * 1024, 'x');
      await until(async () => /crawl: waiting: Redis (memory full|is out of memory)/.test(stderr), 20_000, 'the crawl saying Redis is full');
      expect(stderr).toMatch(/maxmemory/);
      // Writes were refused meanwhile (Redis counts them by error code), and the crawl is still running.
      await until(async () => Number(/^errorstat_OOM:count=(\d+)/m.exec(await admin.info('errorstats'))?.[1] ?? 0) > 0, 10_000, 'writes refused');
      await new Promise((r) => setTimeout(r, 2000));
      expect(crawl.exitCode).toBeNull();

      await admin.del('filler');
      const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('still running'), 120_000))]);
      expect({ code, stderr: stderr.slice(-2000) }).toMatchObject({ code: 0 });
      const summary = JSON.parse(stdout);
      expect(summary.complete).toBe(true);
      expect(crawlFigures(web).lostUrls).toEqual([]);
      expect(summary.totals.fetched).toBe(web.requests.filter((r) => r.path !== '/robots.txt').length);
    } catch (error) {
      const log = existsSync(join(dir, 'crawl.log')) ? readFileSync(join(dir, 'crawl.log'), 'utf8').split('\n') : [];
      const warnings = log.filter((l) => /"level":[456]0/.test(l)).slice(-10);
      const said = stderr.split('\n').filter((l) => l.startsWith('crawl:'));
      process.stderr.write(`--- crawl said\n${said.join('\n')}\n--- crawl.log warnings\n${warnings.map((l) => l.slice(0, 600)).join('\n')}\n`);
      process.stderr.write(
        `--- crawl.log last\n${log
          .slice(-40)
          .map((l) => l.slice(0, 400))
          .join('\n')}\n`,
      );
      throw error;
    } finally {
      crawl.kill('SIGKILL');
      admin.disconnect();
    }
  }, 240_000);

  it('started on a Redis that is full, waits for memory instead of failing, then runs to its summary', async () => {
    const admin = new Redis(redis.url);
    const dir = tempDir('full-at-start-');
    writeFileSync(join(dir, 'hosts'), web.hostsFile());
    try {
      const used = Number(/^used_memory:(\d+)/m.exec(await admin.info('memory'))![1]);
      await admin.setrange('filler', MAXMEMORY - used + 1024 * 1024, 'x');
      // Exact URL-seen reserves nothing up front, so no start check stands between the crawl and a Redis refusing writes.
      const crawl = spawn(
        process.execPath,
        [CLI, web.seeds()[0], '--hosts-file', join(dir, 'hosts'), '--allow-private', '--redis', redis.url, '--prefix', 'full-at-start', '--out', dir, '--json'],
        {
          env: {
            ...process.env,
            ...ONE_ADDRESS_ENV,
            URL_SEEN_MODE: 'exact',
            REDIS_MEMORY_CHECK_MS: '200',
            DOWNLOADER_ROBOTS_ERROR_TTL_MS: ROBOTS_ERROR_TTL_MS,
            DOWNLOADER_ROBOTS_UNREACHABLE_MAX_MS: ROBOTS_UNREACHABLE_MAX_MS,
            FRONTIER_MAX_PAGES: '5',
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stderr = '';
      let stdout = '';
      crawl.stdout.on('data', (chunk) => (stdout += chunk));
      crawl.stderr.on('data', (chunk) => (stderr += chunk));
      const exited = new Promise<number | null>((resolve) => crawl.once('close', resolve));
      try {
        await until(
          async () => /crawl: waiting: Redis is out of memory \(OOM command not allowed\): free memory or raise its maxmemory/.test(stderr) || crawl.exitCode !== null,
          30_000,
          'the crawl saying Redis is out of memory',
        );
        expect({ exitCode: crawl.exitCode, stderr: stderr.slice(-1000) }).toMatchObject({ exitCode: null });
        await admin.del('filler');
        const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('still running'), 60_000))]);
        // FRONTIER_MAX_PAGES keeps the run short: it ends on its page budget (exit 4), not on an error.
        expect({ code, stderr: stderr.slice(-1000) }).toMatchObject({ code: 4 });
        expect(JSON.parse(stdout)).toMatchObject({ stopped: 'budget', pagesFetched: 5 });
      } finally {
        crawl.kill('SIGKILL');
      }
    } finally {
      admin.disconnect();
    }
  }, 120_000);
});

async function until(ok: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

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
