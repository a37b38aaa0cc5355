import { readdirSync, readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import type { HostSetAside } from '@crawler/crawl-state';
import { createDatabase, dropDatabase, POSTGRES_URL } from '@crawler/records/testing';
import { TestWeb } from '../web/test-web';
import { REDIS_URL } from './redis-prefix';
import { explainLost, LostUrl } from './soak-lost';
import { TestWebCluster } from './test-web-cluster';

/**
 * A long crawl of the test web in the distributed shape (every service its own process, BullMQ on Redis,
 * an S3 server), watched as it goes: each process's RSS, the Redis memory of the run's prefix and every
 * queue's depth, sampled when 10%, 50% and 100% of the expected pages are fetched. Used by `bench/soak.ts`
 * (100 k pages) and `test/e2e/soak-reduced.test.ts` (a few thousand).
 */
export interface SoakOptions {
  hosts: number;
  pagesPerHost: number;
  /** FRONTIER_MIN_DELAY_MS: the politeness delay between two requests to one host. */
  delayMs: number;
  /** Hosts announcing `Crawl-delay: 1` (each then takes ≥ pagesPerHost seconds). */
  crawlDelayHosts: number;
  timeoutMs: number;
  /**
   * Where the per-page records live: `postgres` (a database created for the run on POSTGRES_URL, dropped
   * after) or `redis` (the crawl's Redis, as small crawls keep them). @defaultValue soakRecords()
   */
  records?: 'postgres' | 'redis';
  /** Called with progress lines (the bench prints them). */
  log?: (line: string) => void;
  /** More environment for every service, applied last (a fault to see the loss report at work, say). */
  env?: Record<string, string>;
}

interface SoakSample {
  /** Share of the expected pages fetched when sampled (10, 50, 100). */
  percent: number;
  fetched: number;
  seconds: number;
  /** Service name (with a replica index when there are several) → current RSS, bytes (VmRSS). */
  rssBytes: Record<string, number>;
  /** Sum of MEMORY USAGE over every key of the run's prefix (queues and state), bytes. */
  prefixBytes: number;
  /** Keys under the run's prefix. */
  prefixKeys: number;
  /** Of prefixBytes, BullMQ's event streams (each trimmed to about 10,000 events: a fixed cost per queue). */
  eventStreamBytes: number;
  /** Of prefixBytes, URL-seen's Bloom filter (allocated for URL_SEEN_EXPECTED_URLS up front: sized for the run). */
  bloomBytes: number;
  /** Of prefixBytes, keys with a time to live. */
  expiringBytes: number;
  /** Key class → bytes (see `prefixMemory`). */
  byClass: Record<string, number>;
  /** INFO memory used_memory of the whole Redis instance (shared with anything else running), bytes. */
  usedMemoryBytes: number;
  /** Queue → waiting + active + delayed at that moment. */
  depths: Record<string, number>;
}

interface PolitenessReport {
  /** Reachable URLs not fetched exactly once. */
  notOnce: number;
  /** Disallowed URLs that were fetched. */
  disallowedFetched: number;
  /** Fetched URLs neither reachable nor robots.txt. */
  unexpected: number;
  /** Hosts whose first request was not robots.txt. */
  robotsNotFirst: number;
  /** Hosts with two requests closer than max(delay, Crawl-delay). */
  tooClose: number;
  /** Most requests in flight at once on any one host. */
  maxConcurrentPerHost: number;
  /** Smallest gap between two requests to one host, over all hosts, ms. */
  minIntervalMs: number;
  /** Smallest gap between two requests to a Crawl-delay host, ms. */
  minCrawlDelayIntervalMs: number;
}

export interface SoakResult {
  hosts: number;
  pagesPerHost: number;
  delayMs: number;
  crawlDelayHosts: number;
  expectedUrls: number;
  fetched: number;
  complete: boolean;
  seconds: number;
  pagesPerSecond: number;
  processes: number;
  samples: SoakSample[];
  /** Queue → largest depth seen over the whole run (polled every 500 ms). */
  maxDepths: Record<string, number>;
  /** Queue → depth at the end. */
  finalDepths: Record<string, number>;
  /** Crawl totals named `failed.*` (unexpected errors): should be empty. */
  failures: Record<string, number>;
  /** Where the per-page records were kept. */
  records: 'postgres' | 'redis';
  redis: {
    /**
     * Prefix bytes at 100% ÷ pages fetched, the Bloom filter (sized for this run's URLs) and the frontier
     * counted; BullMQ's event streams left out (each capped at ~10,000 events: a fixed cost per queue).
     */
    bytesPerPage: number;
    /** The same with everything under the prefix. */
    allBytesPerPage: number;
    /** Growth of the keys that do not expire from 50% to 100% ÷ pages fetched meanwhile: the steady-state cost of a page. */
    marginalBytesPerPage: number;
    /** The same with the keys that expire (which grow with the rate until their life has passed once). */
    marginalAllBytesPerPage: number;
    /** Of bytesPerPage, keys that expire (batch ids, lease claims, cached robots.txt): bounded by time, not by pages. */
    expiringBytesPerPage: number;
    /** REDIS_BUDGET_PER_PAGE. */
    budgetPerPage: number;
    /** Key classes of per-page records found in Redis at 100% (none on PostgreSQL). */
    perPageRecordClasses: string[];
  };
  politeness: PolitenessReport;
  /** Reachable URLs never requested (the first 20), each with where it was lost: read before the services stopped. */
  lost: LostUrl[];
  /**
   * Hosts the crawl set aside that the web did not mean it to (robots.txt given up on a host whose robots.txt
   * works, a Crawl-delay over the maximum, backed off for timeouts), in words: each leaves the host's URLs
   * unfetched in a crawl that still ends "complete".
   */
  setAside: string[];
}

/**
 * Redis bytes a fetched page may cost at steady state, with the per-page records in PostgreSQL: docs/estimates.md
 * ("Redis memory per page"). What is left in Redis is bounded by hosts (the frontier's records, the last
 * FRONTIER_AUDIT_LENGTH audit entries, robots.txt, url-filter's counts), by time (batch ids, lease claims) or by
 * the URLs seen (the Bloom filter, sized for them), never by the pages' own records.
 */
const REDIS_BUDGET_PER_PAGE = 80;

/** URLs the soak's Bloom filter is sized for, per reachable URL of the test web (see runSoak). */
const SOAK_BLOOM_HEADROOM = 2;
const SOAK_BLOOM_FALSE_POSITIVE_RATE = 1e-6;

/** Crawl totals that count work not done or done again: the ones to read when a URL was never requested. */
const LOSS_COUNTERS = /^(duplicate|stored|seen\.|skipped|rejected|set-aside|dead-letter|failed-urls|frontier\.(repeated|stale|leases|pruned|ring))/;

/** Key classes of the per-page records (content-seen's and the WARC archive's): none may be in Redis on PostgreSQL. */
const PER_PAGE_RECORD_CLASSES = /^(content-seen:(urls|original|duplicates|simhash)|warc:captures)/;

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const log = options.log ?? (() => undefined);
  const t0 = performance.now();
  const web = await TestWeb.start({ hosts: options.hosts, pagesPerHost: options.pagesPerHost, crawlDelayHosts: options.crawlDelayHosts });
  const expectedUrls = web.expected.reachable.size;
  log(`test web: ${options.hosts} hosts × ${options.pagesPerHost} pages, ${expectedUrls} reachable URLs (built in ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  const cluster = new TestWebCluster(web);
  const records = options.records ?? (await soakRecords());
  const database = records === 'postgres' ? await createDatabase('soak') : undefined;
  log(`records: ${records}${database ? ` (${database.name})` : ''}`);
  try {
    await cluster.start({
      env: {
        URL_FILTER_MAX_DEPTH: '1000000',
        FRONTIER_MIN_DELAY_MS: String(options.delayMs),
        // The Bloom filter sized for this run, so that its bytes are those a crawl of this size would pay: room
        // for every URL url-seen is asked about (the reachable ones, and the disallowed, missing and failing ones
        // links name), at a rate that makes a false positive (a URL taken for seen, never fetched) unlikely
        // over the run (≈ 3.6 B a URL). Sized for the reachable URLs alone at the default 0.1%, the filter
        // overfills and loses about one URL in 2,000 — the soak's "every URL once" check fails, as it should.
        URL_SEEN_EXPECTED_URLS: String(SOAK_BLOOM_HEADROOM * expectedUrls),
        URL_SEEN_FALSE_POSITIVE_RATE: String(SOAK_BLOOM_FALSE_POSITIVE_RATE),
        // Each process's pool at its default size (RECORDS_POOL_SIZE): content-seen's checks run many at once.
        ...(database ? { RECORDS_URL: database.url } : {}),
        ...options.env,
      },
    });
  } catch (error) {
    if (database) await dropDatabase(database.name).catch(() => undefined);
    // A service that did not start leaves the others running (TestWebCluster.start knows none of them then).
    killStrays(cluster.prefix);
    await cluster.close().catch(() => undefined);
    await web.close();
    throw error;
  }
  const redis = new Redis(REDIS_URL);
  const names = serviceNames(cluster);
  const samples: SoakSample[] = [];
  const maxDepths: Record<string, number> = {};
  let status: any;
  let started = 0;
  try {
    started = performance.now();
    if ((await cluster.seed(web.seeds())) !== 201) throw new Error('the control plane refused the seeds');
    const marks = [10, 50];
    const deadline = Date.now() + options.timeoutMs;
    for (;;) {
      await sleep(500);
      status = await cluster.status();
      const depths = depthsOf(status);
      for (const [q, d] of Object.entries(depths)) maxDepths[q] = Math.max(maxDepths[q] ?? 0, d);
      const fetched = status.totals.fetched ?? 0;
      while (marks.length && fetched >= (marks[0] / 100) * expectedUrls) {
        const percent = marks.shift()!;
        samples.push(await sample(percent, fetched, depths));
        log(describeSample(samples[samples.length - 1]));
      }
      if (status.complete || Date.now() > deadline) break;
    }
    const seconds = (performance.now() - started) / 1000;
    samples.push(await sample(100, status.totals.fetched ?? 0, depthsOf(status)));
    log(describeSample(samples[samples.length - 1]));
    // Asked while the services still answer: what the crawl knew of each URL it never requested.
    const lost = await explainLost(web, cluster.control, {
      redis,
      key: `${cluster.prefix}:url-seen:bloom`,
      expectedUrls: Number(cluster.env.URL_SEEN_EXPECTED_URLS),
      falsePositiveRate: Number(cluster.env.URL_SEEN_FALSE_POSITIVE_RATE),
    });
    for (const l of lost)
      log(
        `never requested: ${l.url} (${l.state}, marked seen: ${l.markedSeen}; via ${l.via.map((v) => `${v.url} ×${v.requested} ${v.state}`).join(', ')}): ${l.verdict}`,
      );
    await cluster.stopServices();
    const fetched = status.totals.fetched ?? 0;
    const counts = web.requestCountByUrl();
    const notOnce = [...web.expected.reachable].filter((url) => counts.get(url) !== 1);
    if (notOnce.length)
      log(
        `not fetched exactly once: ${notOnce
          .slice(0, 10)
          .map((url) => `${url} ×${counts.get(url) ?? 0}`)
          .join(', ')}`,
      );
    log(`totals: ${JSON.stringify(Object.fromEntries(Object.entries(status.totals as Record<string, number>).filter(([k]) => LOSS_COUNTERS.test(k))))}`);
    // The web's robots.txt-500 hosts are set aside by design (their URLs are not reachable); any other host is not.
    const robotsError = new Set(web.roles.robotsError);
    const setAside = ((status.hostsSetAside ?? []) as HostSetAside[])
      .filter((aside) => !(aside.reason === 'robots-unreachable' && robotsError.has(aside.host.split(':')[0])))
      .map((aside) => `${aside.host} (${aside.reason}, ${aside.urls} URLs): ${aside.detail}`);
    for (const aside of setAside) log(`set aside: ${aside}`);
    return {
      hosts: options.hosts,
      pagesPerHost: options.pagesPerHost,
      delayMs: options.delayMs,
      crawlDelayHosts: options.crawlDelayHosts,
      expectedUrls,
      fetched,
      complete: status.complete,
      seconds,
      pagesPerSecond: fetched / seconds,
      processes: cluster.services.length,
      samples,
      maxDepths,
      finalDepths: depthsOf(status),
      failures: Object.fromEntries(Object.entries(status.totals as Record<string, number>).filter(([k]) => k.startsWith('failed.'))),
      records,
      redis: redisFigures(samples, fetched),
      politeness: politenessReport(web, options.delayMs),
      lost,
      setAside,
    };
  } finally {
    await redis.quit();
    await cluster.close();
    await web.close();
    if (database) await dropDatabase(database.name);
  }

  async function sample(percent: number, fetched: number, depths: Record<string, number>): Promise<SoakSample> {
    const rssBytes: Record<string, number> = {};
    cluster.services.forEach((s, i) => (rssBytes[names[i]] = currentRss(s.process.pid!)));
    const memory = await prefixMemory(redis, cluster.prefix);
    const info = await redis.info('memory');
    const usedMemoryBytes = Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
    return { percent, fetched, seconds: (performance.now() - started) / 1000, rssBytes, ...memory, usedMemoryBytes, depths };
  }
}

/**
 * SOAK_RECORDS (`postgres` or `redis`) when set; else `postgres` when POSTGRES_URL is set or a server answers at
 * its default (postgres://postgres@127.0.0.1:5432/test), `redis` when none does.
 */
async function soakRecords(env: NodeJS.ProcessEnv = process.env): Promise<'postgres' | 'redis'> {
  const named = env.SOAK_RECORDS;
  if (named === 'postgres' || named === 'redis') return named;
  if (named) throw new Error(`SOAK_RECORDS must be postgres or redis (got ${JSON.stringify(named)})`);
  if (env.POSTGRES_URL) return 'postgres';
  const client = new Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return 'postgres';
  } catch {
    return 'redis';
  } finally {
    await client.end().catch(() => undefined);
  }
}

function redisFigures(samples: SoakSample[], fetched: number): SoakResult['redis'] {
  const end = samples[samples.length - 1];
  const half = samples.find((s) => s.percent === 50);
  const state = (s: SoakSample) => s.prefixBytes - s.eventStreamBytes;
  const lasting = (s: SoakSample) => state(s) - s.expiringBytes;
  const growth = (of: (s: SoakSample) => number) => (half ? (of(end) - of(half)) / Math.max(1, end.fetched - half.fetched) : NaN);
  return {
    bytesPerPage: state(end) / Math.max(1, fetched),
    allBytesPerPage: end.prefixBytes / Math.max(1, fetched),
    marginalBytesPerPage: growth(lasting),
    marginalAllBytesPerPage: growth(state),
    expiringBytesPerPage: end.expiringBytes / Math.max(1, fetched),
    budgetPerPage: REDIS_BUDGET_PER_PAGE,
    perPageRecordClasses: Object.keys(end.byClass).filter((cls) => PER_PAGE_RECORD_CLASSES.test(cls)),
  };
}

/** What the crawl-expectations check (test/e2e/crawl-expectations.ts), as counts instead of assertions. */
function politenessReport(web: TestWeb, delayMs: number): PolitenessReport {
  const counts = web.requestCountByUrl();
  const { reachable, disallowed, crawlDelay } = web.expected;
  const firstPath = new Map<string, string>();
  for (const r of web.requests) if (!firstPath.has(r.host)) firstPath.set(r.host, r.path);
  const intervals = web.minIntervalByHost();
  const crawlDelayGaps = [...intervals].filter(([host]) => crawlDelay.has(host)).map(([, gap]) => gap);
  return {
    notOnce: [...reachable].filter((url) => counts.get(url) !== 1).length,
    disallowedFetched: [...disallowed].filter((url) => counts.has(url)).length,
    unexpected: [...counts.keys()].filter((url) => !reachable.has(url) && !url.endsWith('/robots.txt')).length,
    robotsNotFirst: [...firstPath.values()].filter((path) => path !== '/robots.txt').length,
    tooClose: [...intervals].filter(([host, gap]) => gap < Math.max(delayMs, (crawlDelay.get(host) ?? 0) * 1000)).length,
    maxConcurrentPerHost: Math.max(0, ...web.maxConcurrentByHost().values()),
    minIntervalMs: Math.min(Infinity, ...intervals.values()),
    minCrawlDelayIntervalMs: Math.min(Infinity, ...crawlDelayGaps),
  };
}

/**
 * Sum of MEMORY USAGE over the keys under `prefix:` (SCAN + pipelined MEMORY USAGE, so Redis is not blocked),
 * in all and by key class (`frontier:audit`, `{parse}:*` for BullMQ's job hashes…). BullMQ's event streams
 * (`{<queue>}:events`) are counted apart: BullMQ trims each to about 10,000 events, a fixed cost per queue,
 * not a cost per URL.
 */
async function prefixMemory(
  redis: Redis,
  prefix: string,
): Promise<{ prefixBytes: number; prefixKeys: number; eventStreamBytes: number; bloomBytes: number; expiringBytes: number; byClass: Record<string, number> }> {
  let prefixBytes = 0;
  let expiringBytes = 0;
  let prefixKeys = 0;
  let eventStreamBytes = 0;
  let bloomBytes = 0;
  const byClass: Record<string, number> = {};
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (!keys.length) continue;
    const pipeline = redis.pipeline();
    for (const key of keys) pipeline.call('MEMORY', 'USAGE', key).pttl(key);
    const results = (await pipeline.exec()) ?? [];
    keys.forEach((key, i) => {
      const bytes = Number(results[2 * i]?.[1] ?? 0);
      if (Number(results[2 * i + 1]?.[1] ?? -1) > 0) expiringBytes += bytes;
      const [first, second] = key.slice(prefix.length + 1).split(':');
      const cls = second === undefined ? first : /^[a-z-]+$/.test(second) ? `${first}:${second}` : `${first}:*`;
      byClass[cls] = (byClass[cls] ?? 0) + bytes;
      if (second === 'events') eventStreamBytes += bytes;
      if (first === 'url-seen' && second === 'bloom') bloomBytes += bytes;
      prefixBytes += bytes;
    });
    prefixKeys += keys.length;
  } while (cursor !== '0');
  return { prefixBytes, prefixKeys, eventStreamBytes, bloomBytes, expiringBytes, byClass };
}

function depthsOf(status: any): Record<string, number> {
  const depths: Record<string, number> = {};
  for (const [queue, c] of Object.entries((status?.queues ?? {}) as Record<string, { waiting: number; active: number; delayed: number }>)) {
    depths[queue] = c.waiting + c.active + c.delayed;
  }
  return depths;
}

/** SIGKILLs this user's processes started with CRAWLER_PREFIX=`prefix` (unique per run: only ours). */
function killStrays(prefix: string): void {
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`CRAWLER_PREFIX=${prefix}`)) process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone, or not ours to read
    }
  }
}

/** Current resident set (VmRSS), bytes; 0 once the process is gone. */
function currentRss(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function serviceNames(cluster: TestWebCluster): string[] {
  const seen = new Map<string, number>();
  return cluster.services.map((s) => {
    const n = seen.get(s.name) ?? 0;
    seen.set(s.name, n + 1);
    return n ? `${s.name}#${n + 1}` : s.name;
  });
}

function describeSample(s: SoakSample): string {
  const mb = (b: number) => (b / 2 ** 20).toFixed(0);
  return `${s.percent}%: ${s.fetched} fetched in ${s.seconds.toFixed(0)} s; RSS MiB ${Object.entries(s.rssBytes)
    .map(([n, b]) => `${n} ${mb(b)}`)
    .join(', ')}; prefix ${mb(s.prefixBytes)} MiB in ${s.prefixKeys} keys`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The checks, each a failure message or nothing. Bounds are generous: they catch growth, not noise. */
export function soakFailures(r: SoakResult, bounds = { rssGrowth: 1.5, rssSlackBytes: 64 * 2 ** 20, budgetFactor: 1 }): string[] {
  const failures: string[] = [];
  if (!r.complete) failures.push(`crawl not complete: ${r.fetched}/${r.expectedUrls} fetched`);
  if (r.setAside.length) failures.push(`hosts set aside, their URLs not fetched: ${r.setAside.join('; ')}`);
  if (Object.keys(r.failures).length) failures.push(`unexpected errors: ${JSON.stringify(r.failures)}`);
  const half = r.samples.find((s) => s.percent === 50);
  const end = r.samples[r.samples.length - 1];
  if (half) {
    for (const [name, rss] of Object.entries(end.rssBytes)) {
      const limit = half.rssBytes[name] * bounds.rssGrowth + bounds.rssSlackBytes;
      if (rss > limit)
        failures.push(`${name}: RSS ${mib(rss)} MiB at 100% > ${bounds.rssGrowth} × ${mib(half.rssBytes[name])} MiB at 50% + ${mib(bounds.rssSlackBytes)}`);
    }
  }
  // Keys that expire (batch ids, lease claims, robots.txt) are bounded by time: rate × their life, whatever
  // the pages; they are reported (expiringBytesPerPage), and judged by the growth from 50% to 100%.
  const lasting = r.redis.bytesPerPage - r.redis.expiringBytesPerPage;
  if (lasting > r.redis.budgetPerPage * bounds.budgetFactor) {
    failures.push(`Redis ${lasting.toFixed(0)} B per page in keys that do not expire > budget ${r.redis.budgetPerPage} × ${bounds.budgetFactor}`);
  }
  if (r.redis.marginalBytesPerPage > r.redis.budgetPerPage * bounds.budgetFactor) {
    failures.push(
      `Redis's keys that do not expire grew ${r.redis.marginalBytesPerPage.toFixed(0)} B per page from 50% to 100% > budget ${r.redis.budgetPerPage} × ${bounds.budgetFactor}`,
    );
  }
  if (r.records === 'postgres' && r.redis.perPageRecordClasses.length) failures.push(`per-page records in Redis: ${r.redis.perPageRecordClasses.join(', ')}`);
  // Unbounded growth: a queue holding a large share of the whole crawl at once, or not drained at the end.
  for (const [queue, max] of Object.entries(r.maxDepths)) {
    if (max > Math.max(2000, r.expectedUrls * 0.25)) failures.push(`queue ${queue} reached ${max} jobs (${r.expectedUrls} URLs in all)`);
  }
  for (const [queue, depth] of Object.entries(r.finalDepths)) if (depth > 0) failures.push(`queue ${queue} not drained: ${depth}`);
  const p = r.politeness;
  if (p.tooClose || p.maxConcurrentPerHost > 1 || p.robotsNotFirst) failures.push(`impolite: ${JSON.stringify(p)}`);
  if (p.notOnce || p.disallowedFetched || p.unexpected) failures.push(`incomplete or wrong: ${JSON.stringify(p)}`);
  return failures;
}

const mib = (b: number) => (b / 2 ** 20).toFixed(0);

/** The result as a Markdown report. */
export function soakMarkdown(r: SoakResult): string {
  const mb = (b: number) => (b / 2 ** 20).toFixed(1);
  const services = Object.keys(r.samples[0]?.rssBytes ?? {});
  const lines = [
    `# Soak: ${r.fetched} pages over ${r.hosts} hosts (distributed shape, ${r.processes} processes)`,
    '',
    `Test web ${r.hosts} hosts × ${r.pagesPerHost} pages, ${r.expectedUrls} reachable URLs; politeness delay ${r.delayMs} ms ` +
      `(FRONTIER_MIN_DELAY_MS), ${r.crawlDelayHosts} hosts with Crawl-delay: 1, robots.txt obeyed, one request per host at a time. ` +
      `${r.complete ? 'Complete' : 'NOT complete'} in ${r.seconds.toFixed(0)} s (${r.pagesPerSecond.toFixed(1)} pages/s).`,
    '',
    '## Process RSS (MiB) at 10%, 50%, 100% of the expected pages',
    '',
    `| service | ${r.samples.map((s) => `${s.percent}%`).join(' | ')} | 100% ÷ 50% |`,
    `|---|${r.samples.map(() => '---|').join('')}---|`,
    ...services.map((name) => {
      const values = r.samples.map((s) => s.rssBytes[name] ?? 0);
      const half = r.samples.find((s) => s.percent === 50)?.rssBytes[name];
      const ratio = half ? ((r.samples[r.samples.length - 1].rssBytes[name] ?? 0) / half).toFixed(2) : '—';
      return `| ${name} | ${values.map(mb).join(' | ')} | ${ratio} |`;
    }),
    '',
    '## Redis',
    '',
    '| at | pages fetched | keys under the prefix | bytes under the prefix (MiB) | of which BullMQ event streams (MiB) | of which the Bloom filter (MiB) | of which expiring keys (MiB) | bytes per page, event streams left out | used_memory, whole instance (MiB) |',
    '|---|---|---|---|---|---|---|---|---|',
    ...r.samples.map(
      (s) =>
        `| ${s.percent}% | ${s.fetched} | ${s.prefixKeys} | ${mb(s.prefixBytes)} | ${mb(s.eventStreamBytes)} | ${mb(s.bloomBytes)} | ${mb(s.expiringBytes)} | ${((s.prefixBytes - s.eventStreamBytes) / Math.max(1, s.fetched)).toFixed(0)} | ${mb(s.usedMemoryBytes)} |`,
    ),
    '',
    `Records in ${r.records === 'postgres' ? 'PostgreSQL' : 'Redis'}. Bytes per page at the end, the Bloom filter (sized for this run's URLs) and the frontier counted, BullMQ's capped event streams left out: **${r.redis.bytesPerPage.toFixed(0)}** ` +
      `(${r.redis.allBytesPerPage.toFixed(0)} with them; of it, keys that expire: ${r.redis.expiringBytesPerPage.toFixed(0)}); growth from 50% to 100%: **${r.redis.marginalBytesPerPage.toFixed(0)}** per page in keys that do not expire, ${r.redis.marginalAllBytesPerPage.toFixed(0)} with those that do. ` +
      `Budget from docs/estimates.md, for the keys that do not expire (${(r.redis.bytesPerPage - r.redis.expiringBytesPerPage).toFixed(0)} B a page) and for the growth: ${r.redis.budgetPerPage} ` +
      `(${r.redis.bytesPerPage - r.redis.expiringBytesPerPage <= r.redis.budgetPerPage && r.redis.marginalBytesPerPage <= r.redis.budgetPerPage ? 'within' : 'OVER'}). ` +
      `Per-page record classes in Redis: ${r.redis.perPageRecordClasses.length ? r.redis.perPageRecordClasses.join(', ') : 'none'}.`,
    '',
    'Largest key classes at the end (MiB):',
    '',
    '| key class | MiB |',
    '|---|---|',
    ...Object.entries(r.samples[r.samples.length - 1]?.byClass ?? {})
      .sort((a, b) => b[1] - a[1])
      .slice(0, 12)
      .map(([cls, bytes]) => `| ${cls} | ${mb(bytes)} |`),
    '',
    '## Queue depths (waiting + active + delayed)',
    '',
    `| queue | max over the run | ${r.samples.map((s) => `at ${s.percent}%`).join(' | ')} | at the end |`,
    `|---|---|${r.samples.map(() => '---|').join('')}---|`,
    ...Object.keys(r.maxDepths)
      .sort()
      .map((q) => `| ${q} | ${r.maxDepths[q]} | ${r.samples.map((s) => s.depths[q] ?? 0).join(' | ')} | ${r.finalDepths[q] ?? 0} |`),
    '',
    "## Politeness and completeness (judged from the test web's request log)",
    '',
    '| check | value |',
    '|---|---|',
    ...Object.entries(r.politeness).map(([k, v]) => `| ${k} | ${typeof v === 'number' && !Number.isInteger(v) ? v.toFixed(1) : v} |`),
    `| unexpected errors (failed.*) | ${JSON.stringify(r.failures)} |`,
    '',
    ...(r.lost.length
      ? [
          '## Never requested (what the crawl knew of each, read before the services stopped)',
          '',
          ...r.lost.map((l) => `- ${l.url} (${l.state}): ${l.verdict}. Via ${l.via.map((v) => `${v.url} (requested ${v.requested}×, ${v.state})`).join('; ')}`),
          '',
        ]
      : []),
  ];
  return lines.join('\n');
}
