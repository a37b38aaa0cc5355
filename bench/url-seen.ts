/**
 * URL-seen, on this machine: checks per second through UrlSeenService.admit, bytes per URL and the measured
 * false-positive rate, for a Bloom filter at 1 % and at 0.1 % and for the exact set of 64-bit fingerprints,
 * on the memory driver and on one local Redis.
 *
 * 1. Insert: BENCH_URL_SEEN_EXPECTED (default 10,000,000) new URLs into a filter sized for that many (the
 *    exact set: BENCH_URL_SEEN_EXACT_URLS, default 1,000,000, into a set sized for that many), through
 *    admit() in batches of 50 (one page's links), 8 batches in flight (the processor's concurrency).
 * 2. Repeat: the first BENCH_URL_SEEN_CHECKS (default 1,000,000) of them again: every one must be refused.
 * 3. False positives: BENCH_URL_SEEN_CHECKS URLs never inserted. Bloom: tested against the filter's bits read
 *    back from Redis (GET), so the test itself adds nothing (checking through admit() would fill the filter
 *    as it goes); exact: through admit(), counting the refused ones.
 * 4. Bytes per URL: Bloom m / 8 / n by construction, checked against MEMORY USAGE of the bitmap; exact:
 *    Redis `used_memory` Δ / URLs (server-wide: run on an otherwise idle Redis; flagged when other clients'
 *    key count changed meanwhile) and the sum of MEMORY USAGE of the run's keys (blind to other clients); for the memory driver, the Node heap Δ after a GC. For comparison, the same
 *    fingerprints in one Redis set of 11-character base64url strings (the layout not chosen).
 * Every key of the run's prefix is deleted at the end.
 * The last line of output is `BENCH_RESULT {json}`: for Bloom 1 % and exact on each driver, checks/s of new URLs
 * (the insert pass) and bytes per URL as measured (Redis used_memory Δ, or the Node heap Δ).
 *
 * Usage: npm run -s bench:url-seen  (REDIS_URL defaults to redis://127.0.0.1:6379; BENCH_URL_SEEN_DRIVERS=memory
 * or redis to run one driver; BENCH_QUICK=1 for a smoke run, unless set explicitly: 300,000 URLs per Bloom filter,
 * not 1,000,000, as a filter on Redis fills at under 100,000 URLs/s; 10× fewer in the exact set and 10× fewer checks)
 */
import { createHash, randomBytes } from 'node:crypto';
import os from 'node:os';
import v8 from 'node:v8';
import vm from 'node:vm';
import Redis from 'ioredis';
import { BloomHasher, shardedBloomParameters } from '@crawler/bloom';
import { loadConfig } from '@crawler/config';
import type { CrawlUrl } from '@crawler/contracts';
import { MemoryStateStore, RedisStateStore, type StateStore } from '@crawler/state';
import { describeSeenStats, UrlSeenService } from '@crawler/url-seen';
import { printBenchResult, type BenchFigure } from './report/bench-result';
import { redisInfo, redisCpuSeconds } from './redis-info';

const QUICK = process.env.BENCH_QUICK === '1';
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const EXPECTED = Number(process.env.BENCH_URL_SEEN_EXPECTED || (QUICK ? 300_000 : 10_000_000));
const EXACT_URLS = Number(process.env.BENCH_URL_SEEN_EXACT_URLS || (QUICK ? 100_000 : 1_000_000));
const CHECKS = Number(process.env.BENCH_URL_SEEN_CHECKS || (QUICK ? 100_000 : 1_000_000));
const DRIVERS = (process.env.BENCH_URL_SEEN_DRIVERS || 'memory,redis').split(',');
const BATCH = 50;
const CONCURRENCY = 8;

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

interface Scenario {
  name: string;
  mode: 'bloom' | 'exact';
  /** URLs inserted, and what the structure is sized for. */
  urls: number;
  falsePositiveRate: number;
}

const SCENARIOS: Scenario[] = [
  { name: 'Bloom, 1 %', mode: 'bloom', urls: EXPECTED, falsePositiveRate: 0.01 },
  { name: 'Bloom, 0.1 %', mode: 'bloom', urls: EXPECTED, falsePositiveRate: 0.001 },
  { name: 'exact (64-bit fingerprints)', mode: 'exact', urls: EXACT_URLS, falsePositiveRate: 0.01 },
];

/** URL number i: 60–80 characters over 50,000 hosts. Inserted ones are articles, never-inserted ones stories. */
const insertedUrl = (i: number) => `https://www.site-${i % 50_000}.example/section-${i % 37}/article-${i}.html`;
const freshUrl = (i: number) => `https://www.site-${i % 50_000}.example/section-${i % 37}/story-${i}.html`;

interface Pass {
  urls: number;
  admitted: number;
  seconds: number;
  nodeCpuUs: number;
  redisCpuUs: number;
}

/** `count` URLs through admit(), BATCH at a time, CONCURRENCY batches in flight. */
async function pump(seen: UrlSeenService, count: number, url: (i: number) => string, redis?: Redis): Promise<Pass> {
  let next = 0;
  let admitted = 0;
  const redisCpu0 = redis ? await redisCpuSeconds(redis) : 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const from = next;
        next = Math.min(count, next + BATCH);
        const batch: CrawlUrl[] = [];
        for (let i = from; i < next; i++) batch.push({ url: url(i), depth: 1, source: 'link', hops: 0 });
        const fresh = await seen.admit(batch); // not `admitted += await …`: that reads `admitted` before awaiting
        admitted += fresh.length;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const redisCpuUs = redis ? ((await redisCpuSeconds(redis)) - redisCpu0) * 1e6 : 0;
  return { urls: count, admitted, seconds, nodeCpuUs: cpu.user + cpu.system, redisCpuUs };
}

/**
 * Server-wide used_memory, read when the server has settled (query buffers of the last calls freed), and
 * how many keys other clients hold (a change between two readings means the Δ is not ours alone).
 */
async function usedMemory(redis: Redis, prefix: string): Promise<{ used: number; foreignKeys: number }> {
  await new Promise((r) => setTimeout(r, 1500));
  const used = Number((await redisInfo(redis, 'memory')).used_memory);
  return { used, foreignKeys: (await redis.dbsize()) - (await keysOf(redis, prefix)).length };
}

async function keysOf(redis: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}

/** Sum of MEMORY USAGE (exact, SAMPLES 0) of every key of the prefix, and the key count. */
async function memoryUsage(redis: Redis, prefix: string): Promise<{ keys: number; bytes: number; encodings: string[] }> {
  const keys = await keysOf(redis, prefix);
  let bytes = 0;
  const encodings = new Map<string, number>();
  for (let i = 0; i < keys.length; i += 1000) {
    const slice = keys.slice(i, i + 1000);
    const usage = await Promise.all(slice.map((k) => redis.memory('USAGE', k, 'SAMPLES', 0) as Promise<number>));
    const kinds = await Promise.all(slice.map((k) => redis.object('ENCODING', k) as Promise<string>));
    bytes += usage.reduce((s, n) => s + Number(n ?? 0), 0);
    for (const kind of kinds) encodings.set(kind, (encodings.get(kind) ?? 0) + 1);
  }
  return { keys: keys.length, bytes, encodings: [...encodings].map(([kind, n]) => `${fmt(n)} ${kind}`) };
}

function heapBytes(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** Bloom false positives of `count` never-inserted URLs against the bitmap read back from Redis. */
function bloomFalsePositives(bitmaps: Buffer[], scenario: Scenario, count: number): number {
  const params = shardedBloomParameters(scenario.urls, scenario.falsePositiveRate); // as BloomSeenSet on one Redis
  const hasher = new BloomHasher(params);
  // Redis bit order: bit 0 is the most significant bit of byte 0.
  const has = (url: string) => {
    const { shard, offsets } = hasher.place(url, params.shards);
    const bitmap = bitmaps[shard];
    return offsets.every((o) => o >>> 3 < bitmap.length && (bitmap[o >>> 3] & (0x80 >> (o & 7))) !== 0);
  };
  for (let i = 0; i < 10_000; i++) {
    if (!has(insertedUrl(i))) throw new Error(`inserted URL ${i} is not in the filter read back`);
  }
  let positives = 0;
  for (let i = 0; i < count; i++) if (has(freshUrl(i))) positives++;
  return positives;
}

interface Row {
  scenario: Scenario;
  driver: string;
  layout: string;
  insert: Pass;
  repeat: Pass;
  /** Fresh URLs refused (false positives) out of `checks`, and how they were checked. */
  falsePositives?: { count: number; checks: number; how: string; pass?: Pass };
  estimatedRate: number;
  statsMs: number;
  summary: string;
  bytes: { label: string; perUrl: number; total: number }[];
  encodings?: string[];
}

async function run(scenario: Scenario, driver: string, admin: Redis | undefined, prefix: string): Promise<Row> {
  const config = loadConfig({}, { 'seen.mode': scenario.mode, 'seen.expectedUrls': scenario.urls, 'seen.falsePositiveRate': scenario.falsePositiveRate });
  const store: StateStore = driver === 'redis' ? new RedisStateStore({ url: REDIS_URL, prefix }) : new MemoryStateStore();
  const seen = new UrlSeenService(store, config);
  await seen.onModuleInit();
  try {
    const memory0 = admin ? await usedMemory(admin, prefix) : { used: heapBytes(), foreignKeys: 0 };
    process.stderr.write(`${scenario.name}, ${driver}: inserting ${fmt(scenario.urls)} URLs…\n`);
    const insert = await pump(seen, scenario.urls, insertedUrl, admin);
    if (scenario.mode === 'exact' && insert.admitted !== scenario.urls) throw new Error(`exact mode admitted ${insert.admitted} of ${scenario.urls} new URLs`);
    const memory1 = admin ? await usedMemory(admin, prefix) : { used: heapBytes(), foreignKeys: 0 };
    const delta = memory1.used - memory0.used;
    const disturbed =
      memory1.foreignKeys !== memory0.foreignKeys ? ` ⚠ other clients' keys ${memory0.foreignKeys} → ${memory1.foreignKeys} meanwhile: not ours alone` : '';
    const t0 = performance.now();
    const stats = await seen.stats();
    const statsMs = performance.now() - t0;

    const bytes: Row['bytes'] = [];
    let encodings: string[] | undefined;
    if (scenario.mode === 'bloom' && stats.mode === 'bloom')
      bytes.push({ label: 'm / 8 (by construction)', perUrl: stats.bits / 8 / scenario.urls, total: stats.bits / 8 });
    // The measured Δ goes last, where the BENCH_RESULT figure reads it.
    if (admin) {
      const usage = await memoryUsage(admin, prefix);
      encodings = usage.encodings;
      bytes.push({ label: `MEMORY USAGE of its ${fmt(usage.keys)} keys`, perUrl: usage.bytes / scenario.urls, total: usage.bytes });
      bytes.push({ label: `Redis used_memory Δ${disturbed}`, perUrl: delta / scenario.urls, total: delta });
    } else {
      bytes.push({ label: 'Node heap + array buffers Δ', perUrl: delta / scenario.urls, total: delta });
    }

    const checks = Math.min(CHECKS, scenario.urls);
    process.stderr.write(`${scenario.name}, ${driver}: checking ${fmt(checks)} seen URLs again…\n`);
    const repeat = await pump(seen, checks, insertedUrl, admin);
    if (repeat.admitted !== 0) throw new Error(`${repeat.admitted} URLs admitted twice`);

    let falsePositives: Row['falsePositives'];
    if (scenario.mode === 'exact') {
      process.stderr.write(`${scenario.name}, ${driver}: checking ${fmt(CHECKS)} new URLs…\n`);
      const pass = await pump(seen, CHECKS, freshUrl, admin);
      falsePositives = { count: CHECKS - pass.admitted, checks: CHECKS, how: 'admit()', pass };
    } else if (admin) {
      process.stderr.write(`${scenario.name}, ${driver}: testing ${fmt(CHECKS)} new URLs against the bits read back…\n`);
      const shards = stats.mode === 'bloom' ? stats.shards : 1;
      const keys = shards === 1 ? [`${prefix}:url-seen:bloom`] : Array.from({ length: shards }, (_, i) => `${prefix}:url-seen:bloom:${i}`);
      const bitmaps = await Promise.all(keys.map((key) => admin.getBuffer(key)));
      if (bitmaps.some((bitmap) => !bitmap)) throw new Error('no bitmap in Redis');
      falsePositives = { count: bloomFalsePositives(bitmaps as Buffer[], scenario, CHECKS), checks: CHECKS, how: 'bits read back (GET)' };
    }
    return {
      scenario,
      driver,
      layout: seen.layout,
      insert,
      repeat,
      falsePositives,
      estimatedRate: stats.falsePositiveRate,
      statsMs,
      summary: describeSeenStats(stats),
      bytes,
      encodings,
    };
  } finally {
    await store.clear();
    await store.close();
  }
}

/** The layout not chosen: the same fingerprints in one Redis set, as 11-character base64url strings. */
async function singleSetReference(admin: Redis, prefix: string, count: number): Promise<{ perUrl: number; usage: number; encoding: string }> {
  const key = `${prefix}:single-set`;
  const before = await usedMemory(admin, prefix);
  for (let from = 0; from < count; from += 1000) {
    const members: string[] = [];
    for (let i = from; i < Math.min(count, from + 1000); i++) members.push(createHash('sha256').update(insertedUrl(i)).digest().subarray(0, 8).toString('base64url'));
    await admin.sadd(key, ...members);
  }
  const after = await usedMemory(admin, prefix);
  const usage = Number(await admin.memory('USAGE', key, 'SAMPLES', 0));
  const encoding = String(await admin.object('ENCODING', key));
  await admin.unlink(key);
  const disturbed = after.foreignKeys !== before.foreignKeys ? ' ⚠ other clients wrote meanwhile' : '';
  return { perUrl: (after.used - before.used) / count, usage: usage / count, encoding: `${encoding}${disturbed}` };
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const mib = (n: number) => `${fmt(n / 2 ** 20, 1)} MiB`;
const pct = (x: number) => (x >= 0.0001 ? `${fmt(x * 100, 3)} %` : x === 0 ? '0' : x.toExponential(1));
const rate = (p: Pass) => fmt(p.urls / p.seconds);

async function main() {
  const runId = randomBytes(4).toString('hex');
  const loadAtStart = os.loadavg();
  const admin = DRIVERS.includes('redis') ? new Redis(REDIS_URL, { maxRetriesPerRequest: null }) : undefined;
  const server = admin ? await redisInfo(admin, 'server') : undefined;
  const rows: Row[] = [];
  let reference: Awaited<ReturnType<typeof singleSetReference>> | undefined;
  try {
    for (const driver of DRIVERS) {
      for (const [i, scenario] of SCENARIOS.entries()) {
        rows.push(await run(scenario, driver, driver === 'redis' ? admin : undefined, `bench-url-seen-${runId}-${i}`));
      }
    }
    if (admin) reference = await singleSetReference(admin, `bench-url-seen-${runId}-ref`, EXACT_URLS);
  } finally {
    if (admin) {
      const left = await keysOf(admin, `bench-url-seen-${runId}-*`);
      if (left.length) await admin.unlink(...left);
      console.error(`Cleanup: keys of bench-url-seen-${runId}-* deleted${left.length ? ` (${left.length} were left)` : ''}.`);
      await admin.quit();
    }
  }

  console.log(`\n## URL-seen: ${fmt(EXPECTED)} URLs per Bloom filter, ${fmt(EXACT_URLS)} in the exact set\n`);
  console.log(
    `Machine: ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim()}), Node ${process.version}, load average ${loadAtStart.map((l) => l.toFixed(1)).join(' ')} at start, ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} at end${server ? `; Redis ${server.redis_version}` : ''}`,
  );
  console.log(
    `admit() in batches of ${BATCH} URLs (one page's links), ${CONCURRENCY} batches in flight; URLs ${insertedUrl(123_456).length} characters like ${insertedUrl(123_456)}\n`,
  );

  console.log('### Checks per second (admit)\n');
  console.log('| structure | driver | new URLs (inserted) | seen URLs (all refused) | new URLs, exact | Node CPU µs / URL | Redis CPU µs / URL |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const passes = [r.insert, r.repeat, ...(r.falsePositives?.pass ? [r.falsePositives.pass] : [])];
    const n = passes.reduce((s, p) => s + p.urls, 0);
    const node = passes.reduce((s, p) => s + p.nodeCpuUs, 0) / n;
    const redis = passes.reduce((s, p) => s + p.redisCpuUs, 0) / n;
    console.log(
      `| ${r.scenario.name} | ${r.driver} | **${rate(r.insert)}/s** (${fmt(r.insert.urls)} in ${fmt(r.insert.seconds, 1)} s) | ${rate(r.repeat)}/s | ` +
        `${r.falsePositives?.pass ? `${rate(r.falsePositives.pass)}/s` : '—'} | ${fmt(node, 2)} | ${r.driver === 'redis' ? fmt(redis, 2) : '—'} |`,
    );
  }

  console.log('\n### Bytes per URL and false positives\n');
  console.log('| structure | driver | layout | bytes per URL | target | false positives measured | estimated from the fill | stats() time |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const bytes = r.bytes.map((b) => `${b.label}: **${fmt(b.perUrl, 3)}** (${mib(b.total)})`).join('<br>');
    const target = r.scenario.mode === 'bloom' && r.scenario.falsePositiveRate === 0.01 ? `≤ 1.3 ${r.bytes[0].perUrl <= 1.3 ? '✓' : '✗'}` : '';
    const fp = r.falsePositives
      ? `**${pct(r.falsePositives.count / r.falsePositives.checks)}** (${fmt(r.falsePositives.count)} of ${fmt(r.falsePositives.checks)} new URLs, ${r.falsePositives.how})`
      : '— (see the Redis row: same bits)';
    console.log(
      `| ${r.scenario.name} | ${r.driver} | ${r.layout}${r.encodings ? `<br>keys: ${r.encodings.join(', ')}` : ''} | ${bytes} | ${target} | ${fp} | ${pct(r.estimatedRate)} | ${fmt(r.statsMs, 1)} ms |`,
    );
  }
  if (reference) {
    console.log(
      `| for comparison: the same ${fmt(EXACT_URLS)} fingerprints in ONE Redis set (11-char base64url members, ${reference.encoding}) | redis | not used | ` +
        `Redis used_memory Δ: **${fmt(reference.perUrl, 3)}**<br>MEMORY USAGE: ${fmt(reference.usage, 3)} | | | | |`,
    );
  }
  console.log('\nWhat stats() said at the end of each insert:\n');
  for (const r of rows) console.log(`- ${r.scenario.name}, ${r.driver}: ${r.summary}`);
  printBenchResult('url-seen', figures(rows));
}

/** Bloom 1 % and exact, each driver: checks/s of new URLs and the measured bytes per URL (the last `bytes` entry). */
function figures(rows: Row[]): BenchFigure[] {
  return rows
    .filter((r) => r.scenario.mode === 'exact' || r.scenario.falsePositiveRate === 0.01)
    .flatMap((r) => {
      const id = `${r.driver}-${r.scenario.mode}`;
      const measured = r.bytes[r.bytes.length - 1];
      return [
        { id: `${id}-checks`, label: `URL-seen checks/s, ${r.scenario.name}, ${r.driver} (new URLs)`, value: r.insert.urls / r.insert.seconds, unit: 'URLs/s' },
        {
          id: `${id}-bytes`,
          label: `URL-seen bytes per URL, ${r.scenario.name}, ${r.driver} (${measured.label}, ${fmt(r.scenario.urls)} URLs)`,
          value: measured.perUrl,
          unit: 'B',
        },
      ];
    });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
