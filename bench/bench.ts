/**
 * `npm run bench`: the crawl benchmark, every contender in ONE run on this machine against one benchmark
 * web (bench/web: BENCH_HOSTS × BENCH_PAGES_PER_HOST pages, a median of 30 KB, built in memory in a process of its
 * own; BENCH_WEB picks its shape), then the micro-benchmarks. Results: bench/results/bench.{json,md,svg}, the
 * machine's prices for a page fault, a system call and a round trip between processes first (machine-costs.ts).
 *
 *   ceiling                   undici request + htmlparser2, one process per core, no pipeline
 *   ours-embedded             `crawl`, one process                 } BENCH_PAGES pages, delay 0, robots.txt
 *   ours-embedded-redis       the same with --redis (resumable)    }
 *   ours-distributed          every service its own process        } obeyed, one request per host at a time
 *   ours-distributed-cluster  the same on a 3-master Redis Cluster }
 *   crawlee                   Crawlee's CheerioCrawler, its defaults
 *   polite-*                  BENCH_POLITE_PAGES pages with a 1 s per-host delay: ours (both shapes) and
 *                             Crawlee with sameDomainDelaySecs 1; the bound is hosts ÷ delay pages/s
 *
 * Environment: BENCH_HOSTS (200), BENCH_PAGES_PER_HOST (500), BENCH_PAGES (20000), BENCH_WEB (real: pages shaped
 * like real ones, see docs/performance.md "The benchmark web"; simple: the first web's uniform pages),
 * BENCH_PAGE_KB (30, the real shape's median page size), BENCH_LATENCY_MS (10,
 * the web's think time per answer), BENCH_POLITE_PAGES (12000), BENCH_POLITE_DELAY_MS (1000), BENCH_RUNS
 * (comma-separated run ids to do, default all), BENCH_PEER_TIMEOUT_S (300: a peer run still going is stopped and
 * reported as unfinished), BENCH_QUICK=1 (micro-benchmarks on small inputs),
 * BENCH_WARM_UP_PAGES (4000: pages fetched from the web before the first run, untimed), BENCH_OUT
 * (bench/results), BENCH_CPU_PROF_DIR (unset: our processes write --cpu-prof profiles there),
 * REDIS_URL (redis://127.0.0.1:6379), REDIS_CLUSTER_URL (the cluster of ours-distributed-cluster,
 * redis+cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002), BENCH_RECORDS (postgres: the distributed runs
 * keep their records in a database of their own, created on the server of POSTGRES_URL
 * (postgres://postgres@127.0.0.1:5432/test) and dropped after, as the deployments keep them in PostgreSQL;
 * redis: in Redis hashes), BENCH_REDIS_BREAKDOWN=1 (the distributed runs also count Redis's commands by where they
 * came from, a script and the commands it ran or a plain command, with MONITOR on every master: a table in
 * bench.md; the monitor slows Redis, so the run's other figures are not comparable).
 */
import { spawnSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { runCeiling } from './crawl/run-ceiling';
import { runCrawlee } from './crawl/run-crawlee';
import { runDistributed } from './crawl/run-distributed';
import { runEmbedded } from './crawl/run-embedded';
import { measureMachineCosts } from './machine-costs';
import { RedisMeter } from './crawl/redis-meter';
import { targetChecks } from './crawl/targets';
import type { BenchResults, CrawlRun, MicroBenchmark } from './report/results';
import { renderMarkdown } from './report/markdown';
import { writeResults } from './report/write-results';
import { BENCH_WEB_SHAPES, type BenchWebShape } from './web/bench-web';
import { BenchWebProcess } from './web/bench-web-process';
import { WARM_UP_PAGES, warmUp } from './web/warm-up';

const env = (name: string, fallback: number) => Number(process.env[name] || fallback);
const HOSTS = env('BENCH_HOSTS', 200);
const PAGES_PER_HOST = env('BENCH_PAGES_PER_HOST', 500);
const PAGES = env('BENCH_PAGES', 20_000);
const LATENCY_MS = env('BENCH_LATENCY_MS', 10);
const WEB_SHAPE = webShape(process.env.BENCH_WEB || 'real');
const PAGE_KB = env('BENCH_PAGE_KB', 30);
const POLITE_PAGES = env('BENCH_POLITE_PAGES', 12_000);
const POLITE_DELAY_MS = env('BENCH_POLITE_DELAY_MS', 1000);
const PEER_TIMEOUT_MS = env('BENCH_PEER_TIMEOUT_S', 300) * 1000;
const RECORDS = recordsIn(process.env.BENCH_RECORDS || 'postgres');
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const REDIS_CLUSTER_URL = process.env.REDIS_CLUSTER_URL || 'redis+cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002';
const WARM_UP = env('BENCH_WARM_UP_PAGES', WARM_UP_PAGES);
const OUT = process.env.BENCH_OUT || join(__dirname, '../../bench/results');
const ONLY = process.env.BENCH_RUNS ? new Set(process.env.BENCH_RUNS.split(',')) : undefined;

const MICRO = [
  { script: 'parse-extract', command: 'npm run bench:parse-extract' },
  { script: 'url-seen', command: 'npm run bench:url-seen' },
  { script: 'content-seen', command: 'npm run bench:content-seen' },
  { script: 'frontier', command: 'npm run bench:frontier' },
];

async function main() {
  // Before the web is built: measured on a quiet machine.
  const costs = await measureMachineCosts();
  log(
    `kernel crossings: a page fault ${costs.pageFaultUs.toFixed(1)} µs, a read ${costs.readUs.toFixed(2)} µs, a round trip to another process ${costs.processRoundTripUs.toFixed(0)} µs`,
  );
  const web = await BenchWebProcess.start({ hosts: HOSTS, pagesPerHost: PAGES_PER_HOST, seed: 1, latencyMs: LATENCY_MS, shape: WEB_SHAPE, pageKb: PAGE_KB });
  log(`benchmark web (${WEB_SHAPE}): ${HOSTS} hosts × ${PAGES_PER_HOST} pages, ${(web.pageBytes / 2 ** 20).toFixed(0)} MiB of pages built in ${web.buildMs} ms`);
  const runs: CrawlRun[] = [];
  const polite = `${POLITE_PAGES} pages, ${POLITE_DELAY_MS} ms per-host delay`;
  const plan: [string, () => Promise<CrawlRun>][] = [
    ['ceiling', () => runCeiling(web, PAGES)],
    ['ours-embedded', () => runEmbedded(web, { id: 'ours-embedded', label: 'ours, embedded (1 process)', pages: PAGES, delayMs: 0 })],
    [
      'ours-embedded-redis',
      () => runEmbedded(web, { id: 'ours-embedded-redis', label: 'ours, embedded on Redis (1 process, --redis)', pages: PAGES, delayMs: 0, redisUrl: REDIS_URL }),
    ],
    [
      'ours-distributed',
      () => runDistributed(web, { id: 'ours-distributed', label: 'ours, distributed (9 processes)', pages: PAGES, delayMs: 0, redisUrl: REDIS_URL, records: RECORDS }),
    ],
    [
      'ours-distributed-cluster',
      () =>
        runDistributed(web, {
          id: 'ours-distributed-cluster',
          label: 'ours, distributed on a 3-master Redis Cluster (9 processes)',
          pages: PAGES,
          delayMs: 0,
          redisUrl: REDIS_CLUSTER_URL,
          records: RECORDS,
        }),
    ],
    ['crawlee', () => runCrawlee(web, { id: 'crawlee', label: 'Crawlee CheerioCrawler, defaults', pages: PAGES, timeoutMs: PEER_TIMEOUT_MS })],
    [
      'polite-ours-embedded',
      () => runEmbedded(web, { id: 'polite-ours-embedded', label: `polite: ours, embedded (${polite})`, pages: POLITE_PAGES, delayMs: POLITE_DELAY_MS }),
    ],
    [
      'polite-ours-distributed',
      () =>
        runDistributed(web, {
          id: 'polite-ours-distributed',
          label: `polite: ours, distributed (${polite})`,
          pages: POLITE_PAGES,
          delayMs: POLITE_DELAY_MS,
          redisUrl: REDIS_URL,
          records: RECORDS,
        }),
    ],
    [
      'polite-crawlee',
      () =>
        runCrawlee(web, {
          id: 'polite-crawlee',
          label: `polite: Crawlee, sameDomainDelaySecs ${POLITE_DELAY_MS / 1000} (${POLITE_PAGES} pages)`,
          pages: POLITE_PAGES,
          sameDomainDelaySecs: POLITE_DELAY_MS / 1000,
          timeoutMs: PEER_TIMEOUT_MS,
        }),
    ],
  ];
  await warmUp(web, WARM_UP);
  await web.observe(true);
  for (const [id, run] of plan) {
    if (ONLY && !ONLY.has(id)) continue;
    log(`run ${id}…`);
    const result = await run();
    runs.push(result);
    log(
      `  ${result.pages} pages in ${result.seconds.toFixed(1)} s: ${result.pagesPerSecond.toFixed(0)} pages/s, ${result.cpuMsPerPage.toFixed(2)} CPU ms/page, ${(result.peakRssBytes / 2 ** 20).toFixed(0)} MiB peak RSS`,
    );
  }
  await web.close();

  const micro = ONLY && !ONLY.has('micro') ? [] : MICRO.flatMap(microBenchmark);
  const meter = new RedisMeter(REDIS_URL);
  const results: BenchResults = {
    at: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      model: cpus()[0]?.model.trim() ?? '',
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      redis: await meter.version(),
      costs,
    },
    web: {
      hosts: HOSTS,
      pagesPerHost: PAGES_PER_HOST,
      meanPageBytes: Math.round(web.pageBytes / (HOSTS * PAGES_PER_HOST)),
      latencyMs: LATENCY_MS,
      buildMs: web.buildMs,
      shape: WEB_SHAPE,
      pageKb: PAGE_KB,
    },
    runs,
    micro,
    targets: targetChecks(runs, { hosts: HOSTS, delayMs: POLITE_DELAY_MS }),
  };
  await meter.close();
  writeResults(results, OUT);
  process.stdout.write(`\n${renderMarkdown(results)}\n`);
}

/** Runs one micro-benchmark script and keeps the figures of its BENCH_RESULT line. */
function microBenchmark({ script, command }: { script: string; command: string }): MicroBenchmark[] {
  log(`micro-benchmark ${script}…`);
  const out = spawnSync(process.execPath, [join(__dirname, `${script}.js`)], { env: process.env, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  const line = out.stdout.split('\n').find((l) => l.startsWith('BENCH_RESULT '));
  if (!line) {
    log(`  ${script} printed no result (exit ${out.status}): ${out.stderr.slice(-500)}`);
    return [];
  }
  const parsed = JSON.parse(line.slice('BENCH_RESULT '.length)) as { figures: { id: string; label: string; value: number; unit: string }[] };
  return parsed.figures.map((f) => ({ ...f, id: `${script}.${f.id}`, command }));
}

function webShape(value: string): BenchWebShape {
  if (!(BENCH_WEB_SHAPES as readonly string[]).includes(value)) throw new Error(`BENCH_WEB must be one of ${BENCH_WEB_SHAPES.join(', ')}, not ${value}`);
  return value as BenchWebShape;
}

function recordsIn(value: string): 'postgres' | 'redis' {
  if (value !== 'postgres' && value !== 'redis') throw new Error(`BENCH_RECORDS must be postgres or redis, not ${value}`);
  return value;
}

function log(message: string) {
  process.stderr.write(`[bench] ${message}\n`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
