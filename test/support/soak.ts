import { readdirSync, readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { TestWeb } from '../web/test-web';
import { REDIS_URL } from './redis-prefix';
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
  /** Called with progress lines (the bench prints them). */
  log?: (line: string) => void;
}

export interface SoakSample {
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
  /** Of prefixBytes, URL-seen's Bloom filter (allocated for URL_SEEN_EXPECTED_URLS up front: a fixed cost). */
  bloomBytes: number;
  /** Key class → bytes (see `prefixMemory`). */
  byClass: Record<string, number>;
  /** INFO memory used_memory of the whole Redis instance (shared with anything else running), bytes. */
  usedMemoryBytes: number;
  /** Queue → waiting + active + delayed at that moment. */
  depths: Record<string, number>;
}

export interface PolitenessReport {
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
  redis: {
    /** Prefix bytes at 100%, fixed costs (BullMQ's capped event streams, the preallocated Bloom filter) left out, ÷ pages fetched. */
    bytesPerPage: number;
    /** The same with everything under the prefix. */
    allBytesPerPage: number;
    /** Growth of the prefix (fixed costs left out) from 50% to 100% ÷ pages fetched meanwhile. */
    marginalBytesPerPage: number;
    /** The documented budget per page for this web's shape (see `redisBudgetPerPage`). */
    budgetPerPage: number;
  };
  politeness: PolitenessReport;
}

/**
 * Redis bytes a fetched page may cost, from the per-item figures of docs/estimates.md ("Memory after one
 * month") applied to this web's shape: the politeness audit (181 B an entry, FRONTIER_AUDIT_LENGTH = 200
 * entries a host, two entries a fetch), content-seen's records of a new page (content-hash owner 202 B +
 * URL store 442 B), its near-duplicate index (below), URL-seen exact (9.2 B a URL, the larger mode), and per
 * host the frontier's record (147 B), url-filter's page count (82 B) and a cached robots.txt (2 KB), shared
 * by the host's pages.
 *
 * The near-duplicate index costs 92 B (owner) + 4 × 8 B (bucket members) a page, plus ~110 B for each of its
 * 4 × 2^16 bucket keys that exists. Buckets fill as pages arrive (n pages occupy 4 × 2^16 × (1 − e^(−n/2^16))
 * of them), so the keys weigh ~500 B a page in a small crawl and fade to nothing past a few million pages
 * (at most 28 MiB in all): a fixed cost, like the Bloom filter's, spread over the pages so far.
 */
export function redisBudgetPerPage(pagesPerHost: number, pages: number): number {
  const audit = (181 * Math.min(200, 2 * pagesPerHost)) / pagesPerHost;
  const buckets = 4 * 2 ** 16;
  const bucketKeys = buckets * (1 - Math.exp(-pages / 2 ** 16));
  const nearDuplicateIndex = 92 + 4 * 8 + (110 * bucketKeys) / Math.max(1, pages);
  const contentSeen = 202 + 442 + nearDuplicateIndex;
  const perHost = (147 + 82 + 2048) / pagesPerHost;
  return Math.round(audit + contentSeen + 9.2 + perHost);
}

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const log = options.log ?? (() => undefined);
  const t0 = performance.now();
  const web = await TestWeb.start({ hosts: options.hosts, pagesPerHost: options.pagesPerHost, crawlDelayHosts: options.crawlDelayHosts });
  const expectedUrls = web.expected.reachable.size;
  log(`test web: ${options.hosts} hosts × ${options.pagesPerHost} pages, ${expectedUrls} reachable URLs (built in ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  const cluster = new TestWebCluster(web);
  try {
    await cluster.start({ env: { URL_FILTER_MAX_DEPTH: '1000000', FRONTIER_MIN_DELAY_MS: String(options.delayMs) } });
  } catch (error) {
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
    await cluster.stopServices();
    const fetched = status.totals.fetched ?? 0;
    const final = samples[samples.length - 1];
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
      redis: redisFigures(samples, fetched, options.pagesPerHost),
      politeness: politenessReport(web, options.delayMs),
    };
  } finally {
    await redis.quit();
    await cluster.close();
    await web.close();
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

function redisFigures(samples: SoakSample[], fetched: number, pagesPerHost: number): SoakResult['redis'] {
  const end = samples[samples.length - 1];
  const half = samples.find((s) => s.percent === 50);
  const state = (s: SoakSample) => s.prefixBytes - s.eventStreamBytes - s.bloomBytes;
  return {
    bytesPerPage: state(end) / Math.max(1, fetched),
    allBytesPerPage: end.prefixBytes / Math.max(1, fetched),
    marginalBytesPerPage: half ? (state(end) - state(half)) / Math.max(1, end.fetched - half.fetched) : NaN,
    budgetPerPage: redisBudgetPerPage(pagesPerHost, fetched),
  };
}

/** What the crawl-expectations check (test/e2e/crawl-expectations.ts), as counts instead of assertions. */
export function politenessReport(web: TestWeb, delayMs: number): PolitenessReport {
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
 * in all and by key class (`frontier:audit`, `parse:*` for BullMQ's job hashes…). BullMQ's event streams
 * (`<queue>:events`) are counted apart: BullMQ trims each to about 10,000 events, a fixed cost per queue,
 * not a cost per URL.
 */
export async function prefixMemory(
  redis: Redis,
  prefix: string,
): Promise<{ prefixBytes: number; prefixKeys: number; eventStreamBytes: number; bloomBytes: number; byClass: Record<string, number> }> {
  let prefixBytes = 0;
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
    for (const key of keys) pipeline.call('MEMORY', 'USAGE', key);
    const results = (await pipeline.exec()) ?? [];
    keys.forEach((key, i) => {
      const bytes = Number(results[i]?.[1] ?? 0);
      const [first, second] = key.slice(prefix.length + 1).split(':');
      const cls = second === undefined ? first : /^[a-z-]+$/.test(second) ? `${first}:${second}` : `${first}:*`;
      byClass[cls] = (byClass[cls] ?? 0) + bytes;
      if (second === 'events') eventStreamBytes += bytes;
      if (first === 'url-seen' && second === 'bloom') bloomBytes += bytes;
      prefixBytes += bytes;
    });
    prefixKeys += keys.length;
  } while (cursor !== '0');
  return { prefixBytes, prefixKeys, eventStreamBytes, bloomBytes, byClass };
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
  return `${s.percent}%: ${s.fetched} fetched in ${s.seconds.toFixed(0)} s; RSS MiB ${Object.entries(s.rssBytes).map(([n, b]) => `${n} ${mb(b)}`).join(', ')}; prefix ${mb(s.prefixBytes)} MiB in ${s.prefixKeys} keys`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The checks, each a failure message or nothing. Bounds are generous: they catch growth, not noise. */
export function soakFailures(r: SoakResult, bounds = { rssGrowth: 1.5, rssSlackBytes: 64 * 2 ** 20, budgetFactor: 1 }): string[] {
  const failures: string[] = [];
  if (!r.complete) failures.push(`crawl not complete: ${r.fetched}/${r.expectedUrls} fetched`);
  if (Object.keys(r.failures).length) failures.push(`unexpected errors: ${JSON.stringify(r.failures)}`);
  const half = r.samples.find((s) => s.percent === 50);
  const end = r.samples[r.samples.length - 1];
  if (half) {
    for (const [name, rss] of Object.entries(end.rssBytes)) {
      const limit = half.rssBytes[name] * bounds.rssGrowth + bounds.rssSlackBytes;
      if (rss > limit) failures.push(`${name}: RSS ${mib(rss)} MiB at 100% > ${bounds.rssGrowth} × ${mib(half.rssBytes[name])} MiB at 50% + ${mib(bounds.rssSlackBytes)}`);
    }
  }
  if (r.redis.bytesPerPage > r.redis.budgetPerPage * bounds.budgetFactor) {
    failures.push(`Redis ${r.redis.bytesPerPage.toFixed(0)} B per page > budget ${r.redis.budgetPerPage} × ${bounds.budgetFactor}`);
  }
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
    '| at | pages fetched | keys under the prefix | bytes under the prefix (MiB) | of which BullMQ event streams (MiB) | of which the Bloom filter (MiB) | bytes per page, both left out | used_memory, whole instance (MiB) |',
    '|---|---|---|---|---|---|---|---|',
    ...r.samples.map(
      (s) =>
        `| ${s.percent}% | ${s.fetched} | ${s.prefixKeys} | ${mb(s.prefixBytes)} | ${mb(s.eventStreamBytes)} | ${mb(s.bloomBytes)} | ${((s.prefixBytes - s.eventStreamBytes - s.bloomBytes) / Math.max(1, s.fetched)).toFixed(0)} | ${mb(s.usedMemoryBytes)} |`,
    ),
    '',
    `Bytes per page at the end, fixed costs left out (BullMQ's capped event streams; the Bloom filter, allocated for URL_SEEN_EXPECTED_URLS at boot): **${r.redis.bytesPerPage.toFixed(0)}** ` +
      `(${r.redis.allBytesPerPage.toFixed(0)} with them; growth from 50% to 100%: ${r.redis.marginalBytesPerPage.toFixed(0)} per page). ` +
      `Budget from docs/estimates.md for this shape: ${r.redis.budgetPerPage} (${r.redis.bytesPerPage <= r.redis.budgetPerPage ? 'within' : 'OVER'}).`,
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
    '## Politeness and completeness (judged from the test web\'s request log)',
    '',
    '| check | value |',
    '|---|---|',
    ...Object.entries(r.politeness).map(([k, v]) => `| ${k} | ${typeof v === 'number' && !Number.isInteger(v) ? v.toFixed(1) : v} |`),
    `| unexpected errors (failed.*) | ${JSON.stringify(r.failures)} |`,
    '',
  ];
  return lines.join('\n');
}
