/**
 * `npm run bench:scale`: a crawl of a million pages (SCALE_PAGES) over ten thousand hosts (SCALE_HOSTS) in each
 * shape, sampled every minute as it grows, to show that the crawler keeps its pace and its memory flat and
 * loses nothing at that size. The web (bench/web/scale-web.ts) builds every reply on demand from a seed, lays
 * its hosts out behind a few shared addresses and many own ones, and counts what the crawler did to it: pages,
 * repeats, robots.txt and politeness violations, and the pages never asked for.
 *
 *   embedded      `crawl` in one process, pages on disk (--out); with SCALE_KILL_AT, in Redis (--redis)
 *   distributed   every service its own process, BullMQ and state on the Redis Cluster, records in a
 *                 PostgreSQL database of the run's own, bodies in an S3 stand-in of its own
 *
 * Every SCALE_SAMPLE_MS: pages fetched and pages/s; each process's RSS, V8 heap, CPU and event-loop delay p99
 * (a probe preloaded into it: bench/scale/process-probe.ts); Redis used_memory per master and the bytes of the
 * run's keys that do not expire; the PostgreSQL database's size; the bytes of bodies stored; the frontier's queued
 * URLs and hosts; the control plane's response times. Writes bench/results/scale.{json,md,svg}, prints every
 * target PASS or FAIL, and exits 1 when one fails.
 *
 * Environment: SCALE_PAGES (1000000), SCALE_HOSTS (10000), SCALE_SHAPES (embedded,distributed), SCALE_SAMPLE_MS
 * (60000), SCALE_KILL_AT (unset; e.g. 0.5: kill -9 every crawler process at that share of the pages and start
 * them again), SCALE_ENV (extra env for the crawler, `NAME=value,…`, e.g. FRONTIER_PER_IP_LIMIT=32),
 * SCALE_DELAY_MS (1000: the per-host delay), SCALE_LATENCY_MS (10: the web's think time), SCALE_PAGE_KB (30),
 * SCALE_SHARED_SHARE (0.8: hosts behind shared addresses), SCALE_SHARED_ADDRESSES (4), SCALE_CRAWL_DELAY_HOSTS (10),
 * SCALE_SEED (1), SCALE_TIMEOUT_S (86400, per shape), SCALE_BLOOM_URLS_PER_PAGE (5), SCALE_OUT (bench/results),
 * REDIS_URL, REDIS_CLUSTER_URL, POSTGRES_URL.
 *
 * `node dist/bench/scale.js --rescore` runs nothing: it checks the runs already in SCALE_OUT/scale.json against
 * today's targets and writes scale.md and scale.svg again.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { EARLIER_CLUSTER_SHARDS, PerIpAllowance } from '@crawler/frontier-store';
import { ScaleWebProcess } from './web/scale-web-process';
import { runDistributedScale } from './scale/run-distributed-scale';
import { runEmbeddedScale } from './scale/run-embedded-scale';
import { scaleChecks, type ScaleCheck } from './scale/scale-checks';
import { mergeScaleResults, scaleChart, scaleMarkdown, type ScaleResults } from './scale/scale-report';
import type { ShapeRun } from './scale/scale-sample';
import { crawlerEnv, scaleSettings, type ScaleSettings } from './scale/scale-settings';

/**
 * Requests in flight the crawler may have on one shared address: the per-IP limit grown by the address's
 * registrable domains (every host of the web is one), and in the distributed shape held per frontier shard
 * (the shards of a cluster count an address's domains apart, each to its own allowance: docs/frontier.md).
 */
function perSharedAddressLimit(settings: Pick<ScaleSettings, 'hosts' | 'sharedPerMille' | 'sharedAddresses'>, env: Record<string, string>, shape: string): number {
  const allowance = new PerIpAllowance({
    perIpDomainsPerStep: env.FRONTIER_PER_IP_DOMAINS_PER_STEP ? Number(env.FRONTIER_PER_IP_DOMAINS_PER_STEP) : undefined,
    perIpMaxScale: env.FRONTIER_PER_IP_MAX_SCALE ? Number(env.FRONTIER_PER_IP_MAX_SCALE) : undefined,
  });
  const base = Number(env.FRONTIER_PER_IP_LIMIT || 8);
  const domains = Math.ceil((settings.hosts * settings.sharedPerMille) / 1000 / settings.sharedAddresses);
  if (shape === 'embedded') return base * allowance.scale(domains, '');
  // Over S shards the domains split d = d₁ + … + d_S, and Σ ⌈dᵢ / step⌉ ≤ d / step + S. Unset, S is one a master
  // (or 1 on a node): at most the 64 of a crawl begun before shard counts were recorded, the bound taken here.
  const shards = Math.min(domains, Number(env.FRONTIER_SHARDS || EARLIER_CLUSTER_SHARDS));
  return base * Math.min(shards * allowance.maxScale, Math.ceil(domains / allowance.domainsPerStep) + shards);
}

const checkLine = (c: ScaleCheck) => `${c.pass ? 'PASS' : 'FAIL'} ${c.shape}: ${c.name} — ${c.detail}`;

/** The targets, checked on one shape's run. */
function checksOf(run: ShapeRun, settings: Omit<ScaleSettings, 'out'>): ScaleCheck[] {
  const env = crawlerEnv(settings);
  return scaleChecks(run, {
    perHostLimit: Number(env.FRONTIER_PER_HOST_LIMIT || 1),
    perIpLimit: Number(env.FRONTIER_PER_IP_LIMIT || 8),
    perSharedAddress: perSharedAddressLimit(settings, env, run.shape),
    delayMs: settings.delayMs,
  });
}

/**
 * The results in `out` checked again against today's targets, the report written again: for runs taken before
 * a target changed (a 10⁶-page run takes hours; its samples do not change with the targets).
 */
export function rescore(out: string): ScaleResults {
  const earlier = earlierResults(out);
  if (!earlier) throw new Error(`--rescore: no ${join(out, 'scale.json')} to check again`);
  const results = { ...earlier, checks: earlier.runs.flatMap((run) => checksOf(run, earlier.settings)) };
  writeScaleResults(results, out);
  return results;
}

export async function runScale(settings: ScaleSettings, log: (line: string) => void = console.log, stop?: AbortSignal): Promise<ScaleResults> {
  const runs: ShapeRun[] = [];
  const checks: ScaleCheck[] = [];
  for (const shape of settings.shapes) {
    if (stop?.aborted) break;
    // A web of its own for each shape: its counts are that crawl's alone.
    const web = await ScaleWebProcess.start({
      hosts: settings.hosts,
      pagesPerHost: settings.pagesPerHost,
      seed: settings.seed,
      pageKb: settings.pageKb,
      sharedPerMille: settings.sharedPerMille,
      sharedAddresses: settings.sharedAddresses,
      crawlDelayHosts: settings.crawlDelayHosts,
      latencyMs: settings.latencyMs,
      delayMs: settings.delayMs,
    });
    log(`scale web: ${settings.hosts} hosts × ${settings.pagesPerHost} pages on ${web.addresses} addresses, port ${web.port}`);
    try {
      const run = shape === 'embedded' ? await runEmbeddedScale(web, settings, log, stop) : await runDistributedScale(web, settings, log, stop);
      runs.push(run);
      const shapeChecks = checksOf(run, settings);
      checks.push(...shapeChecks);
      for (const c of shapeChecks) log(checkLine(c));
    } catch (error) {
      // The other shape still runs, and the results say what stopped this one.
      const failed: ScaleCheck = { shape, name: 'ran to the end', pass: false, detail: (error as Error).message };
      checks.push(failed);
      log(checkLine(failed));
    } finally {
      await web.close();
    }
  }
  const { out: _out, ...kept } = settings;
  return {
    at: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', memoryBytes: totalmem() },
    settings: kept,
    runs,
    checks,
  };
}

/** Writes scale.json, scale.md and scale.svg into `out`. */
export function writeScaleResults(results: ScaleResults, out: string): void {
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'scale.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(out, 'scale.md'), scaleMarkdown(results));
  writeFileSync(join(out, 'scale.svg'), scaleChart(results));
}

/** The results already in `out`, if any (see mergeScaleResults). */
function earlierResults(out: string): ScaleResults | undefined {
  const file = join(out, 'scale.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as ScaleResults) : undefined;
}

async function main() {
  const settings = scaleSettings();
  let results: ScaleResults;
  if (process.argv.includes('--rescore')) {
    results = rescore(settings.out);
    for (const c of results.checks) console.log(checkLine(c));
  } else {
    // Ctrl-C (or a SIGTERM) ends the crawl and cleans up what the run made (processes, database, keys, files)
    // instead of leaving them behind; a second one exits at once. Results of an interrupted run are not
    // written over the kept ones: its samples are in the journal, and what it got to (the web's counts, pages
    // never asked for yet, the targets as they stood) in scale-interrupted.json.
    const stop = new AbortController();
    const interrupt = (signal: NodeJS.Signals) => {
      if (stop.signal.aborted) process.exit(130);
      console.log(`${signal}: ending the crawl and cleaning up (again to exit at once)`);
      stop.abort();
    };
    process.on('SIGINT', interrupt).on('SIGTERM', interrupt);
    const run = await runScale(settings, console.log, stop.signal);
    if (stop.signal.aborted) {
      mkdirSync(settings.out, { recursive: true });
      writeFileSync(join(settings.out, 'scale-interrupted.json'), `${JSON.stringify(run, null, 2)}\n`);
      console.log(
        `interrupted: results not written; the samples taken are in ${settings.out}/scale-<shape>.samples.jsonl, where the run got to in ${settings.out}/scale-interrupted.json`,
      );
      process.exitCode = 130;
      return;
    }
    const merged = mergeScaleResults(earlierResults(settings.out), run);
    if (merged.dropped) console.log(`${merged.dropped}: replaced`);
    results = merged.results;
    writeScaleResults(results, settings.out);
  }
  const failed = results.checks.filter((c) => !c.pass);
  console.log(`\n${results.checks.length - failed.length} of ${results.checks.length} targets met; results in ${settings.out}/scale.{json,md,svg}`);
  process.exitCode = failed.length ? 1 : 0;
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
