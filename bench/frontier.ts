/**
 * The Redis frontier's memory and dispatch rate, on this machine, with one local Redis:
 *
 * 1. Redis memory per queued URL: BENCH_FRONTIER_URLS (default 1,000,000) URLs over BENCH_FRONTIER_HOSTS
 *    (default 10,000) hosts are enqueued in batches of 2,000 through RedisFrontierStore.enqueue, entries
 *    encoded as the frontier encodes them (encodeEntry) and spread over the 8 front queues by the default
 *    prioritizer. `used_memory` is read before and after; the delta is broken down by key kind with
 *    MEMORY USAGE (every key of the prefix, SAMPLES 0 = exact).
 * 2. Dispatch rate: claim 500 (lease 60 s), complete each lease at once (no politeness delay), repeat for
 *    BENCH_FRONTIER_SECONDS (default 10) or until BENCH_FRONTIER_DISPATCH (default 200,000) URLs went out.
 * 3. Every key of the run's prefix is deleted at the end.
 * The last line of output is `BENCH_RESULT {json}`: dispatch and enqueue rates, Redis bytes per queued URL.
 *
 * Usage: npm run -s build && node dist/bench/frontier.js   (REDIS_URL defaults to redis://127.0.0.1:6379;
 * BENCH_QUICK=1 for a smoke run: 100,000 URLs and 5 s of dispatch unless set explicitly)
 * The Redis should be otherwise idle: `used_memory`, EVALSHA and CPU figures are server-wide; the dispatch
 * rate is sensitive to other load on the machine (load average printed).
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import Redis from 'ioredis';
import type { CrawlUrl } from '@crawler/contracts';
import { RedisFrontierStore, type FrontierItem, type FrontierStoreOptions } from '@crawler/frontier-store';
import { encodeEntry } from '../libs/frontier/src/frontier-entry';
import { DefaultPrioritizer } from '../libs/frontier/src/prioritizer';
import { countKeys } from './redis-keys';
import { printBenchResult, type BenchFigure } from './report/bench-result';
import { redisInfo, redisCpuSeconds } from './redis-info';

const QUICK = process.env.BENCH_QUICK === '1';
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const URLS = Number(process.env.BENCH_FRONTIER_URLS || (QUICK ? 100_000 : 1_000_000));
const HOSTS = Number(process.env.BENCH_FRONTIER_HOSTS || 10_000);
const BATCH = 2_000;
const CLAIM_MAX = 500;
const DISPATCH_SECONDS = Number(process.env.BENCH_FRONTIER_SECONDS || (QUICK ? 5 : 10));
const DISPATCH_MAX = Number(process.env.BENCH_FRONTIER_DISPATCH || 200_000);

/** The production defaults (libs/config). */
const OPTIONS: FrontierStoreOptions = {
  frontQueues: 8,
  backQueues: 1024,
  priorityBias: 2,
  perHostLimit: 1,
  perIpLimit: 8,
  perIpIntervalMs: 100,
  auditLength: 200,
};

/** Deterministic PRNG (mulberry32), so that every run queues the same URLs. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const random = prng(20240601);
const prioritizer = new DefaultPrioritizer();
const priorities = new Array<number>(OPTIONS.frontQueues).fill(0);
let payloadBytes = 0;

/**
 * URL number i: a random host, a section, a unique article. The mix of a crawl in progress: a few seeds,
 * redirect targets and sitemap URLs, mostly links at depths 1…6 (front queues 0…7 all used).
 */
function crawlUrl(i: number): FrontierItem {
  const host = `www.site-${Math.floor(random() * HOSTS)}.example`;
  const url = `https://${host}/section-${Math.floor(random() * 20)}/article-${i}.html`;
  const r = random();
  const entry: CrawlUrl =
    r < 0.01
      ? { url, depth: 0, source: 'seed', hops: 0 }
      : r < 0.03
        ? { url, depth: 1 + Math.floor(random() * 3), source: 'redirect', hops: 1 }
        : r < 0.13
          ? { url, depth: 1, source: 'sitemap', hops: 0, priority: Math.round(random() * 10) / 10 }
          : { url, depth: 1 + Math.floor(random() * 6), source: 'link', hops: 0 };
  const priority = prioritizer.priority(entry, OPTIONS.frontQueues);
  const item = encodeEntry(entry);
  priorities[priority]++;
  payloadBytes += Buffer.byteLength(host) + 1 + Buffer.byteLength(item); // what a front-queue element holds
  return { host, priority, item };
}

function batch(from: number): FrontierItem[] {
  const items: FrontierItem[] = [];
  for (let i = from; i < Math.min(from + BATCH, URLS); i++) items.push(crawlUrl(i));
  return items;
}

/** Server-wide used_memory, read when the server has settled (query buffers of the last calls freed). */
async function usedMemory(redis: Redis): Promise<{ used: number; dataset: number; clients: number }> {
  await new Promise((r) => setTimeout(r, 1500));
  const m = await redisInfo(redis, 'memory');
  return { used: Number(m.used_memory), dataset: Number(m.used_memory_dataset), clients: Number(m.mem_clients_normal) };
}

interface Breakdown {
  kind: string;
  keys: number;
  elements: number;
  bytes: number;
}

/** MEMORY USAGE of every key of the prefix, grouped by kind. */
async function breakdown(redis: Redis, prefix: string): Promise<Breakdown[]> {
  const kinds = new Map<string, Breakdown>();
  const kindOf = (name: string) => {
    const rest = name.slice(prefix.length + 1);
    if (rest.startsWith('f:')) return 'front-queue lists (f:<i>)';
    if (rest.startsWith('b:')) return 'back-queue lists (b:<j>)';
    if (rest.startsWith('h:')) return 'per-host hashes (h:<host>)';
    if (rest.startsWith('ip:')) return 'per-IP hashes (ip:<ip>)';
    if (['hostb', 'bhost', 'heap', 'free'].includes(rest)) return 'router: hostb, bhost, heap, free';
    if (['lease', 'leases'].includes(rest)) return 'leases: lease, leases';
    return 'other keys (size, seq, init, audit:…)';
  };
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    const rows = await Promise.all(
      keys.map(async (key) => {
        const [bytes, type] = await Promise.all([redis.memory('USAGE', key, 'SAMPLES', 0) as Promise<number>, redis.type(key)]);
        const elements = type === 'list' ? await redis.llen(key) : type === 'hash' ? await redis.hlen(key) : type === 'zset' ? await redis.zcard(key) : 1;
        return { key, bytes: Number(bytes ?? 0), elements };
      }),
    );
    for (const { key, bytes, elements } of rows) {
      const kind = kindOf(key);
      const b = kinds.get(kind) ?? { kind, keys: 0, elements: 0, bytes: 0 };
      b.keys++;
      b.elements += elements;
      b.bytes += bytes;
      kinds.set(kind, b);
    }
  } while (cursor !== '0');
  return [...kinds.values()].sort((a, b) => b.bytes - a.bytes);
}

/** EVALSHA calls and µs so far (server-wide), minus an earlier reading. */
function evalsha(commandstats: string, minus = { calls: 0, usec: 0 }): { calls: number; usec: number } {
  const m = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(commandstats);
  return { calls: Number(m?.[1] ?? 0) - minus.calls, usec: Number(m?.[2] ?? 0) - minus.usec };
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const mib = (n: number) => `${fmt(n / 2 ** 20, 1)} MiB`;

async function main() {
  const prefix = `bench-frontier-${randomBytes(4).toString('hex')}`;
  const admin = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const store = new RedisFrontierStore({ url: REDIS_URL, prefix }, OPTIONS);
  const server = await redisInfo(admin, 'server');
  const clientsBefore = Number((await redisInfo(admin, 'clients')).connected_clients);
  let figures: BenchFigure[];
  try {
    // The scripts are loaded (and the back queues initialised) before the first reading.
    await store.stats();
    await store.claim({ now: Date.now(), max: 1, leaseMs: 60_000 });
    const before = await usedMemory(admin);

    // 1. Enqueue: the next batch is built while Redis runs the current one.
    const evalsha0 = evalsha(await admin.info('commandstats'));
    const cpu0 = process.cpuUsage();
    const redisCpu0 = await redisCpuSeconds(admin);
    const started = performance.now();
    let next = batch(0);
    for (let from = 0; from < URLS; from += BATCH) {
      const pending = store.enqueue(next, Date.now());
      next = from + BATCH < URLS ? batch(from + BATCH) : [];
      await pending;
    }
    const enqueueSeconds = (performance.now() - started) / 1000;
    const enqueueNodeCpu = process.cpuUsage(cpu0);
    const enqueueRedisCpu = (await redisCpuSeconds(admin)) - redisCpu0;
    const enqueueStats = evalsha(await admin.info('commandstats'), evalsha0);

    const after = await usedMemory(admin);
    const stats1 = await store.stats();
    if (stats1.size !== URLS) throw new Error(`frontier size ${stats1.size}, expected ${URLS}`);
    const delta = after.used - before.used;
    const parts1 = await breakdown(admin, prefix);

    // 2. Dispatch: claim 500, complete them all (auto-pipelined), again.
    const evalsha1 = evalsha(await admin.info('commandstats'));
    const since = Math.floor(Date.now() / 1000);
    const cpu1 = process.cpuUsage();
    const redisCpu1 = await redisCpuSeconds(admin);
    let dispatched = 0;
    let rounds = 0;
    let claimMs = 0;
    let completeMs = 0;
    let short = 0;
    const t0 = performance.now();
    const deadline = t0 + DISPATCH_SECONDS * 1000;
    while (dispatched < DISPATCH_MAX && performance.now() < deadline) {
      const c0 = performance.now();
      const claims = await store.claim({ now: Date.now(), max: CLAIM_MAX, leaseMs: 60_000 });
      const c1 = performance.now();
      if (claims.length < CLAIM_MAX) short++;
      if (!claims.length) break;
      const now = Date.now();
      const done = await Promise.all(claims.map((c) => store.complete(c.leaseId, { nextAt: now }, now)));
      if (done.some((ok) => !ok)) throw new Error('a completion was refused');
      claimMs += c1 - c0;
      completeMs += performance.now() - c1;
      dispatched += claims.length;
      rounds++;
    }
    const dispatchSeconds = (performance.now() - t0) / 1000;
    const dispatchNodeCpu = process.cpuUsage(cpu1);
    const dispatchRedisCpu = (await redisCpuSeconds(admin)) - redisCpu1;
    const dispatchStats = evalsha(await admin.info('commandstats'), evalsha1);
    const slow = ((await admin.slowlog('GET', 128)) as [number, number, number, string[]][])
      .filter(([, at, , args]) => at >= since && String(args[0]).toLowerCase().startsWith('eval'))
      .sort((a, b) => b[2] - a[2])
      .slice(0, 5);

    const afterDispatch = await usedMemory(admin);
    const stats2 = await store.stats();
    const parts2 = await breakdown(admin, prefix);
    if (stats2.size !== URLS - dispatched || stats2.leased !== 0) {
      throw new Error(`after dispatch: size ${stats2.size} (expected ${URLS - dispatched}), leased ${stats2.leased}`);
    }

    // Report.
    const enqueueRate = URLS / enqueueSeconds;
    const dispatchRate = dispatched / dispatchSeconds;
    const perUrl = delta / URLS;
    const cpuPct = (us: NodeJS.CpuUsage, s: number) => `${fmt(((us.user + us.system) / 1e6 / s) * 100)} %`;
    figures = [
      { id: 'dispatch-rate', label: `Frontier dispatch rate (claim ${CLAIM_MAX} + complete each, Redis)`, value: dispatchRate, unit: 'URLs/s' },
      { id: 'enqueue-rate', label: `Frontier enqueue rate (batches of ${BATCH}, Redis)`, value: enqueueRate, unit: 'URLs/s' },
      { id: 'redis-bytes-per-url', label: `Frontier Redis memory per queued URL (used_memory Δ, ${fmt(URLS)} URLs)`, value: perUrl, unit: 'B' },
    ];

    console.log(`\n## Redis frontier: ${fmt(URLS)} URLs over ${fmt(HOSTS)} hosts\n`);
    console.log(
      `Machine: ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim()}), Node ${process.version}, load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}; Redis ${server.redis_version} (${server.redis_mode}), ${clientsBefore} clients connected at start`,
    );
    console.log(`Store options: ${JSON.stringify(OPTIONS)}; prefix ${prefix}`);
    console.log(
      `Front queues at enqueue (URLs per priority 0…7): ${priorities.join(' / ')}; mean front element ${fmt(payloadBytes / URLS, 1)} B ("host\\t" + encoded entry)\n`,
    );
    console.log('| figure | value | target |');
    console.log('|---|---|---|');
    console.log(`| Redis memory per queued URL (used_memory Δ / ${fmt(URLS)}) | **${fmt(perUrl, 1)} B** (Δ ${mib(delta)}) | ≤ 150 B ${perUrl <= 150 ? '✓' : '✗'} |`);
    console.log(`| … of which dataset (used_memory_dataset Δ) | ${fmt((after.dataset - before.dataset) / URLS, 1)} B | |`);
    console.log(`| … sum of MEMORY USAGE of the run's keys / ${fmt(URLS)} (blind to other clients) | ${fmt(parts1.reduce((s, p) => s + p.bytes, 0) / URLS, 1)} B | |`);
    console.log(`| Enqueue rate (batches of ${BATCH}) | **${fmt(enqueueRate)} URLs/s** (${fmt(enqueueSeconds, 2)} s) | |`);
    console.log(
      `| Dispatch rate (claim ${CLAIM_MAX} + complete each, no delay) | **${fmt(dispatchRate)} URLs/s** (${fmt(dispatched)} URLs in ${fmt(dispatchSeconds, 2)} s, ${rounds} rounds) | ≥ 10,000 URLs/s ${dispatchRate >= 10_000 ? '✓' : '✗'} |`,
    );
    console.log(`| … time in claim / in completes | ${fmt(claimMs / rounds, 1)} ms / ${fmt(completeMs / rounds, 1)} ms per round (${short} short claims) | |`);
    console.log(
      `| Redis CPU, enqueue / dispatch | ${fmt((enqueueRedisCpu / enqueueSeconds) * 100)} % / ${fmt((dispatchRedisCpu / dispatchSeconds) * 100)} % of a core | |`,
    );
    console.log(`| Node CPU, enqueue / dispatch | ${cpuPct(enqueueNodeCpu, enqueueSeconds)} / ${cpuPct(dispatchNodeCpu, dispatchSeconds)} of a core | |`);
    console.log(`| EVALSHA during enqueue (server-wide) | ${fmt(enqueueStats.calls)} calls, ${fmt(enqueueStats.usec / enqueueStats.calls, 1)} µs per call | |`);
    console.log(
      `| EVALSHA during dispatch (server-wide) | ${fmt(dispatchStats.calls)} calls, ${fmt(dispatchStats.usec / dispatchStats.calls, 1)} µs per call, ${fmt(dispatchStats.usec / dispatched, 1)} µs per URL dispatched | |`,
    );
    console.log(`| CPUs (os.cpus().length) | ${os.cpus().length} | |`);
    console.log(`| Redis version | ${server.redis_version} | |`);

    const table = (title: string, parts: Breakdown[], urls: number, used: number) => {
      const total = parts.reduce((s, p) => s + p.bytes, 0);
      console.log(`\n### ${title}\n`);
      console.log('| keys | count | elements | MEMORY USAGE | B per queued URL |');
      console.log('|---|---|---|---|---|');
      for (const p of parts) console.log(`| ${p.kind} | ${fmt(p.keys)} | ${fmt(p.elements)} | ${mib(p.bytes)} | ${fmt(p.bytes / urls, 1)} |`);
      console.log(`| rest (used_memory Δ − sum: key dictionary, allocator, other clients) | | | ${mib(used - total)} | ${fmt((used - total) / urls, 1)} |`);
      console.log(`| **used_memory Δ** | | | **${mib(used)}** | **${fmt(used / urls, 1)}** |`);
    };
    table(`Memory after enqueue (${fmt(URLS)} URLs queued)`, parts1, URLS, delta);
    table(`Memory after dispatch (${fmt(URLS - dispatched)} URLs queued; per URL still queued)`, parts2, URLS - dispatched, afterDispatch.used - before.used);
    if (slow.length) {
      console.log(
        '\nSlowest scripts during dispatch (SLOWLOG, µs):',
        slow.map(([, , us, args]) => `${us} (${String(args[0]).toLowerCase()} ${String(args[1]).slice(0, 8)}…)`).join(', '),
      );
    }
  } finally {
    await store.clear();
    const left = await countKeys(admin, prefix);
    console.log(`\nCleanup: keys of ${prefix} deleted${left ? ` (${left} still found!)` : ''}.`);
    await store.close();
    await admin.quit();
  }
  printBenchResult('frontier', figures);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
