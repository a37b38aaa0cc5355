/**
 * Embedded memory: one `crawl` process (memory queues and stores, no Redis) crawls the bench web, and its
 * RSS and V8 heap are read as the pages go by. What grows with every page shows as the ratio of the memory
 * at the end to the memory at 20% of the pages (the target: ≤ 1.2), and as bytes per page between the two.
 * Writes bench/results/embedded-memory.json and prints a table.
 *
 * Usage: npm run bench:embedded-memory   (never part of npm test)
 *   MEMORY_HOSTS (200), MEMORY_PAGES_PER_HOST (500), MEMORY_PAGE_KB (8: the web holds every page in memory),
 *   MEMORY_LATENCY_MS (5), MEMORY_HEAP_SNAPSHOTS (unset: with a directory, the crawl writes a heap snapshot
 *   there at 20% and at 95% of the pages), any crawl setting in the environment (passed on).
 */
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ASK_ONCE_ENV, ONE_ADDRESS_ENV } from '../test/support/test-web-cluster';
import { exited } from './crawl/measure';
import { BenchWebProcess } from './web/bench-web-process';

const HOSTS = Number(process.env.MEMORY_HOSTS || 200);
const PAGES_PER_HOST = Number(process.env.MEMORY_PAGES_PER_HOST || 500);
const PAGE_KB = Number(process.env.MEMORY_PAGE_KB || 8);
const LATENCY_MS = Number(process.env.MEMORY_LATENCY_MS || 5);
const SNAPSHOTS = process.env.MEMORY_HEAP_SNAPSHOTS;
const RESULTS = join(__dirname, '../../bench/results');

interface Sample {
  seconds: number;
  pages: number;
  rss: number;
  heapUsed?: number;
  external?: number;
}

async function main() {
  const pages = HOSTS * PAGES_PER_HOST;
  const web = await BenchWebProcess.start({ hosts: HOSTS, pagesPerHost: PAGES_PER_HOST, seed: 1, latencyMs: LATENCY_MS, shape: 'real', pageKb: PAGE_KB });
  const dir = mkdtempSync(join(tmpdir(), 'embedded-memory-'));
  writeFileSync(join(dir, 'hosts'), web.hostsFile());
  writeFileSync(join(dir, 'seeds'), web.seeds().join('\n'));
  const probeFile = join(dir, 'probe.jsonl');
  const args = [
    '--require',
    join(__dirname, 'crawl/memory-probe.js'),
    ...(SNAPSHOTS ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${SNAPSHOTS}`] : []),
    join(__dirname, '../apps/crawl/src/main.js'),
    ...['--seeds-file', join(dir, 'seeds'), '--scope', 'any', '--max-depth', '1000000', '--max-pages', String(pages)],
    ...['--delay', '0', '--hosts-file', join(dir, 'hosts'), '--allow-private', '--out', join(dir, 'out'), '--json'],
  ];
  if (SNAPSHOTS) mkdirSync(SNAPSHOTS, { recursive: true });
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    env: { ...process.env, REDIS_URL: '', S3_URL: '', ...ONE_ADDRESS_ENV, ...ASK_ONCE_ENV, MEMORY_PROBE_FILE: probeFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.pipe(createWriteStream(join(dir, 'stderr.log')));
  const samples: Sample[] = [];
  const snapshotsAt = [0.2, 0.95];
  const timer = setInterval(async () => {
    const rss = rssOf(child.pid!);
    if (rss === null) return;
    const seen = (await web.observe(false)).pages;
    samples.push({ seconds: (performance.now() - started) / 1000, pages: seen, rss });
    if (SNAPSHOTS && snapshotsAt.length && seen >= pages * snapshotsAt[0]) {
      snapshotsAt.shift();
      child.kill('SIGUSR2');
    }
  }, 1000);
  const code = await exited(child);
  clearInterval(timer);
  const seconds = (performance.now() - started) / 1000;
  const summary = code === 0 || code === 4 ? JSON.parse(stdout) : undefined;
  const probes = existsSync(probeFile)
    ? readFileSync(probeFile, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
    : [];
  // Each /proc sample takes the V8 figures of the probe line nearest in time.
  for (const s of samples) {
    const at = started + s.seconds * 1000 + performance.timeOrigin;
    const near = probes.reduce((best, p) => (!best || Math.abs(p.at - at) < Math.abs(best.at - at) ? p : best), undefined);
    if (near) Object.assign(s, { heapUsed: near.heapUsed, external: near.external });
  }
  const observed = await web.observe(true);
  await web.close();
  const at = (fraction: number) => samples.find((s) => s.pages >= observed.pages * fraction) ?? samples[samples.length - 1];
  // The last page's moment, not the last sample: the process shutting down frees what it held.
  const end = at(1);
  const at20 = at(0.2);
  const result = {
    command: `MEMORY_HOSTS=${HOSTS} MEMORY_PAGES_PER_HOST=${PAGES_PER_HOST} MEMORY_PAGE_KB=${PAGE_KB} npm run bench:embedded-memory`,
    exitCode: code,
    pages: observed.pages,
    seconds,
    pagesPerSecond: observed.pages / seconds,
    at: Object.fromEntries([0.2, 0.4, 0.6, 0.8].map((f) => [`${f * 100}%`, at(f)]).concat([['100%', end]])),
    rssRatio: end.rss / at20.rss,
    peakRss: Math.max(...samples.map((s) => s.rss)),
    rssBytesPerPage: (end.rss - at20.rss) / Math.max(1, end.pages - at20.pages),
    heapBytesPerPage: ((end.heapUsed ?? 0) - (at20.heapUsed ?? 0)) / Math.max(1, end.pages - at20.pages),
    summary: summary && { fetched: summary.fetched, stored: summary.stored, stopped: summary.stopped, left: summary.left },
  };
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(join(RESULTS, 'embedded-memory.json'), `${JSON.stringify({ ...result, samples }, null, 2)}\n`);
  console.log(JSON.stringify(result, null, 2));
  if (SNAPSHOTS)
    for (const name of readdirSync(SNAPSHOTS))
      if (name.endsWith('.heapsnapshot') && !name.startsWith('at-')) renameSync(join(SNAPSHOTS, name), join(SNAPSHOTS, `at-${name}`));
  rmSync(dir, { recursive: true, force: true });
}

function rssOf(pid: number): number | null {
  try {
    const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return rss ? Number(rss[1]) * 1024 : null;
  } catch {
    return null;
  }
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
