/**
 * Content seen, on this machine: near-duplicate checks per second with 1,000,000 simhashes indexed, memory
 * per indexed simhash, and the simhash throughput, on the memory driver and on one local Redis.
 *
 * 1. simhash64 on a ~30 KB realistic text (pseudo-English of Zipf-distributed words in sentences): pages/s.
 * 2. Load: BENCH_CONTENT_SEEN_SIMHASHES (default 1,000,000) random simhashes, each for a 64-hex content hash
 *    (what ContentSeenService indexes), through SimhashIndex.add at distance 3 (4 bands × 16 bits),
 *    BENCH_CONTENT_SEEN_LOAD_CONCURRENCY (default 2,000) adds in flight (auto-pipelined on Redis).
 * 3. Lookups: BENCH_CONTENT_SEEN_CHECKS (default 50,000) findNear calls, half hits (an indexed simhash with
 *    0–3 random bits flipped: each must find it) and half misses (fresh random simhashes: each must find
 *    nothing); at 1 in flight (latency) and at 8 in flight (the processor's concurrency).
 * 4. Checks: the same mix through what ContentSeenService does for a page whose text is new: findNear, and
 *    on a miss add (claim + file), 8 in flight.
 * 5. Memory: Redis `used_memory` Δ / simhashes (server-wide: run on an otherwise idle Redis) and the sum of
 *    MEMORY USAGE of the run's keys by kind; for the memory driver, the Node heap Δ after a GC.
 * Every key of the run's prefix is deleted at the end.
 * The last line of output is `BENCH_RESULT {json}`: checks/s (step 4) and bytes per simhash, each driver.
 *
 * Usage: npm run -s bench:content-seen  (REDIS_URL defaults to redis://127.0.0.1:6379;
 * BENCH_CONTENT_SEEN_DRIVERS=memory or redis to run one driver; BENCH_QUICK=1 for a smoke run: 10× fewer
 * simhashes and checks unless set explicitly)
 */
import { createHash, randomBytes } from 'node:crypto';
import os from 'node:os';
import v8 from 'node:v8';
import vm from 'node:vm';
import Redis from 'ioredis';
import { hammingDistance, simhash64, SimhashIndex, toHex } from '@crawler/simhash';
import { pseudoEnglish } from '@crawler/simhash/testing';
import { MemoryStateStore, RedisStateStore, type StateStore } from '@crawler/state';
import { countKeys } from './redis-keys';
import { printBenchResult } from './report/bench-result';
import { redisInfo } from './redis-info';

const QUICK = process.env.BENCH_QUICK === '1';
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const SIMHASHES = Number(process.env.BENCH_CONTENT_SEEN_SIMHASHES || (QUICK ? 100_000 : 1_000_000));
const CHECKS = Number(process.env.BENCH_CONTENT_SEEN_CHECKS || (QUICK ? 5_000 : 50_000));
const LOAD_CONCURRENCY = Number(process.env.BENCH_CONTENT_SEEN_LOAD_CONCURRENCY || 2_000);
const DRIVERS = (process.env.BENCH_CONTENT_SEEN_DRIVERS || 'memory,redis').split(',');
/** ContentSeenProcessor's concurrency. */
const CONCURRENCY = 8;
const MAX_DISTANCE = 3;

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** Deterministic PRNG (mulberry32), so that every run indexes and looks up the same simhashes. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  };
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const mib = (n: number) => `${fmt(n / 2 ** 20, 1)} MiB`;

/** ~30 KB of pseudo-English: 4,000 made-up words drawn by Zipf's law, in sentences of 8–20 words. */
function realisticText(bytes: number): string {
  const generator = pseudoEnglish(30);
  let text = '';
  while (text.length < bytes) text += `${generator.sentence()} `;
  return text.slice(0, bytes);
}

function simhashThroughput(): { pagesPerSecond: number; usPerPage: number; bytes: number } {
  const text = realisticText(30_000);
  for (let i = 0; i < 200; i++) simhash64(text);
  const runs = 2_000;
  const started = performance.now();
  for (let i = 0; i < runs; i++) simhash64(text);
  const seconds = (performance.now() - started) / 1000;
  return { pagesPerSecond: runs / seconds, usPerPage: (seconds / runs) * 1e6, bytes: Buffer.byteLength(text) };
}

/** `simhash` with `count` distinct random bits flipped. */
function flipBits(simhash: string, count: number, next: () => number): string {
  let hi = parseInt(simhash.slice(0, 8), 16);
  let lo = parseInt(simhash.slice(8), 16);
  const bits = new Set<number>();
  while (bits.size < count) bits.add(next() % 64);
  for (const bit of bits) {
    if (bit < 32) hi ^= 1 << (31 - bit);
    else lo ^= 1 << (63 - bit);
  }
  return toHex(hi >>> 0, lo >>> 0);
}

const contentHashOf = (i: number) => createHash('sha256').update(`page ${i}`).digest('hex');

/** Runs `task(i)` for i in [0, count) with `concurrency` in flight. */
async function pool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

interface Query {
  simhash: string;
  /** The indexed position it must find, or -1 for a miss. */
  expected: number;
}

function queries(indexed: string[], seed: number): Query[] {
  const next = prng(seed);
  return Array.from({ length: CHECKS }, (_, i) => {
    if (i % 2 === 1) return { simhash: toHex(next(), next()), expected: -1 };
    const target = next() % indexed.length;
    return { simhash: flipBits(indexed[target], next() % (MAX_DISTANCE + 1), next), expected: target };
  });
}

interface DriverResult {
  driver: string;
  loadSeconds: number;
  lookupSerial: number;
  lookupConcurrent: number;
  checksConcurrent: number;
  lookupMeanUs: number;
  lookupP99Us: number;
  bytesPerSimhash: number;
  bytesNote: string;
  breakdown?: { kind: string; keys: number; bytes: number }[];
}

async function runDriver(driver: string, indexed: string[]): Promise<DriverResult> {
  const prefix = `bench-content-seen-${randomBytes(4).toString('hex')}`;
  const admin = driver === 'redis' ? new Redis(REDIS_URL) : null;
  const store: StateStore = driver === 'redis' ? new RedisStateStore({ url: REDIS_URL, prefix }) : new MemoryStateStore({ prefix });
  try {
    const index = new SimhashIndex(store.namespace('content-seen').namespace('simhash'), { maxDistance: MAX_DISTANCE });
    await index.findNear('0000000000000000'); // connected, scripts loaded
    const heapBefore = heapUsed();
    const redisBefore = admin ? await usedMemory(admin) : 0;

    // 2. Load.
    const loadStarted = performance.now();
    let lastReport = loadStarted;
    await pool(indexed.length, LOAD_CONCURRENCY, async (i) => {
      const owner = await index.add(indexed[i], contentHashOf(i));
      if (owner !== null) throw new Error(`simhash ${indexed[i]} was already indexed for ${owner}`);
      if (i % 100_000 === 0 && performance.now() - lastReport > 5_000) {
        lastReport = performance.now();
        process.stderr.write(`  ${driver}: ${fmt(i)} indexed, ${fmt(i / ((lastReport - loadStarted) / 1000))}/s\n`);
      }
    });
    const loadSeconds = (performance.now() - loadStarted) / 1000;

    let bytesPerSimhash: number;
    let bytesNote: string;
    let breakdown: DriverResult['breakdown'];
    if (admin) {
      const after = await usedMemory(admin);
      breakdown = await memoryBreakdown(admin, prefix);
      const sum = breakdown.reduce((n, b) => n + b.bytes, 0);
      bytesPerSimhash = (after - redisBefore) / indexed.length;
      bytesNote = `used_memory Δ ${mib(after - redisBefore)}; sum of MEMORY USAGE of the run's keys ${fmt(sum / indexed.length, 1)} B per simhash`;
    } else {
      const heap = heapUsed() - heapBefore;
      bytesPerSimhash = heap / indexed.length;
      bytesNote = `Node heap Δ ${mib(heap)} after GC`;
    }

    // 3. Lookups.
    const mix = queries(indexed, 7);
    const verify = (q: Query, found: Awaited<ReturnType<SimhashIndex['findNear']>>) => {
      if (q.expected < 0 ? found !== null : found?.id !== contentHashOf(q.expected)) {
        throw new Error(`findNear(${q.simhash}) answered ${JSON.stringify(found)}, expected ${q.expected < 0 ? 'nothing' : `page ${q.expected}`}`);
      }
      if (found && found.distance !== hammingDistance(q.simhash, found.simhash)) throw new Error('wrong distance');
    };
    const serialCount = Math.min(mix.length, 10_000);
    const latencies: number[] = [];
    const serialStarted = performance.now();
    for (let i = 0; i < serialCount; i++) {
      const t0 = performance.now();
      verify(mix[i], await index.findNear(mix[i].simhash));
      latencies.push(performance.now() - t0);
    }
    const lookupSerial = serialCount / ((performance.now() - serialStarted) / 1000);
    latencies.sort((a, b) => a - b);

    const concurrentStarted = performance.now();
    await pool(mix.length, CONCURRENCY, async (i) => verify(mix[i], await index.findNear(mix[i].simhash)));
    const lookupConcurrent = mix.length / ((performance.now() - concurrentStarted) / 1000);

    // 4. Checks: findNear, then add on a miss (misses are fresh simhashes, so they stay misses).
    const checks = queries(indexed, 8);
    const checksStarted = performance.now();
    await pool(checks.length, CONCURRENCY, async (i) => {
      const found = await index.findNear(checks[i].simhash);
      verify(checks[i], found);
      if (!found) await index.add(checks[i].simhash, contentHashOf(indexed.length + i));
    });
    const checksConcurrent = checks.length / ((performance.now() - checksStarted) / 1000);

    return {
      driver,
      loadSeconds,
      lookupSerial,
      lookupConcurrent,
      checksConcurrent,
      lookupMeanUs: (latencies.reduce((a, b) => a + b, 0) / latencies.length) * 1000,
      lookupP99Us: latencies[Math.floor(latencies.length * 0.99)] * 1000,
      bytesPerSimhash,
      bytesNote,
      breakdown,
    };
  } finally {
    await store.clear();
    if (admin) {
      const left = await countKeys(admin, prefix);
      process.stderr.write(`Cleanup: keys of ${prefix} deleted${left ? ` (${left} still found!)` : ''}.\n`);
      await admin.quit();
    }
    await store.close();
  }
}

function heapUsed(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** Server-wide used_memory, read when the server has settled (query buffers of the last calls freed). */
async function usedMemory(redis: Redis): Promise<number> {
  await new Promise((r) => setTimeout(r, 1500));
  return Number((await redisInfo(redis, 'memory')).used_memory);
}

/** MEMORY USAGE (exact) of every key of the prefix, grouped into band buckets and owner shards. */
async function memoryBreakdown(redis: Redis, prefix: string): Promise<{ kind: string; keys: number; bytes: number }[]> {
  const kinds = new Map<string, { kind: string; keys: number; bytes: number }>();
  const encodings = new Map<string, number>();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 2000);
    cursor = next;
    const pipeline = redis.pipeline();
    for (const key of keys) pipeline.memory('USAGE', key, 'SAMPLES', 0).object('ENCODING', key);
    const answers = (await pipeline.exec()) ?? [];
    keys.forEach((key, i) => {
      const bytes = Number(answers[2 * i]?.[1] ?? 0);
      const encoding = String(answers[2 * i + 1]?.[1]);
      const kind = /:b\d+:[0-9a-f]+$/.test(key) ? 'band buckets b<i>:<16 bits> (sets)' : /:o:[0-9a-f]+$/.test(key) ? 'owner shards o:<16 bits> (hashes)' : 'other';
      const entry = kinds.get(kind) ?? { kind, keys: 0, bytes: 0 };
      entry.keys++;
      entry.bytes += bytes;
      kinds.set(kind, entry);
      encodings.set(`${kind.split(' ')[0]} ${encoding}`, (encodings.get(`${kind.split(' ')[0]} ${encoding}`) ?? 0) + 1);
    });
  } while (cursor !== '0');
  process.stderr.write(`Encodings: ${[...encodings].map(([k, n]) => `${k} × ${fmt(n)}`).join(', ')}\n`);
  return [...kinds.values()].sort((a, b) => b.bytes - a.bytes);
}

async function main() {
  const redisAtStart = DRIVERS.includes('redis')
    ? await (async () => {
        const admin = new Redis(REDIS_URL);
        const server = await redisInfo(admin, 'server');
        const keyspace = await admin.dbsize();
        const clients = Number((await redisInfo(admin, 'clients')).connected_clients);
        await admin.quit();
        return `Redis ${server.redis_version}, ${fmt(keyspace)} keys and ${clients} clients at start`;
      })()
    : 'Redis not used';

  const simhash = simhashThroughput();
  const next = prng(20240601);
  const seen = new Set<string>();
  const indexed: string[] = [];
  while (indexed.length < SIMHASHES) {
    const s = toHex(next(), next());
    if (!seen.has(s)) seen.add(s), indexed.push(s);
  }
  seen.clear();

  const results: DriverResult[] = [];
  for (const driver of DRIVERS) results.push(await runDriver(driver, indexed));

  console.log(`\n## Content seen: near-duplicate index of ${fmt(SIMHASHES)} simhashes (distance ≤ ${MAX_DISTANCE}: 4 bands × 16 bits)\n`);
  console.log(
    `Machine: ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim()}), Node ${process.version}, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}; ${redisAtStart}`,
  );
  console.log(`Lookups: ${fmt(CHECKS)}, half hits (0–3 bits from an indexed simhash, each verified found) and half misses (random, each verified not found)\n`);
  console.log('| figure | value |');
  console.log('|---|---|');
  console.log(
    `| simhash64, ${fmt(simhash.bytes / 1000, 1)} KB page | **${fmt(simhash.pagesPerSecond)} pages/s** (${fmt(simhash.usPerPage)} µs a page, ${fmt((simhash.bytes * simhash.pagesPerSecond) / 2 ** 20, 1)} MiB/s) |`,
  );
  for (const r of results) {
    console.log(
      `| ${r.driver}: load ${fmt(SIMHASHES)} simhashes (add, ${fmt(LOAD_CONCURRENCY)} in flight) | ${fmt(r.loadSeconds, 1)} s (${fmt(SIMHASHES / r.loadSeconds)} adds/s) |`,
    );
    console.log(`| ${r.driver}: **content-seen checks/s** (findNear, add on a miss; ${CONCURRENCY} in flight) | **${fmt(r.checksConcurrent)} checks/s** |`);
    console.log(`| ${r.driver}: lookups/s, findNear only, ${CONCURRENCY} in flight | ${fmt(r.lookupConcurrent)} lookups/s |`);
    console.log(`| ${r.driver}: lookups/s, one at a time | ${fmt(r.lookupSerial)} lookups/s (mean ${fmt(r.lookupMeanUs)} µs, p99 ${fmt(r.lookupP99Us)} µs) |`);
    console.log(`| ${r.driver}: memory per indexed simhash | **${fmt(r.bytesPerSimhash, 1)} B** (${r.bytesNote}) |`);
  }
  for (const r of results.filter((x) => x.breakdown)) {
    console.log(`\n### ${r.driver}: MEMORY USAGE by kind of key\n`);
    console.log('| keys | count | MEMORY USAGE | B per simhash |');
    console.log('|---|---|---|---|');
    for (const b of r.breakdown!) console.log(`| ${b.kind} | ${fmt(b.keys)} | ${mib(b.bytes)} | ${fmt(b.bytes / SIMHASHES, 1)} |`);
  }
  printBenchResult(
    'content-seen',
    results.flatMap((r) => [
      {
        id: `${r.driver}-checks`,
        label: `Content-seen checks/s, ${r.driver} (findNear, add on a miss; ${CONCURRENCY} in flight)`,
        value: r.checksConcurrent,
        unit: 'checks/s',
      },
      {
        id: `${r.driver}-bytes`,
        label: `Content-seen bytes per simhash, ${r.driver} (${r.driver === 'redis' ? 'used_memory Δ' : 'Node heap Δ'}, ${fmt(SIMHASHES)} simhashes)`,
        value: r.bytesPerSimhash,
        unit: 'B',
      },
    ]),
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
