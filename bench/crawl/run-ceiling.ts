import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CrawlRun } from '../report/results';
import type { BenchWebProcess } from '../web/bench-web-process';
import { exited, RunMeter } from './measure';

/** Requests in flight per ceiling process. */
const CONCURRENCY = 64;

/**
 * The ceiling: the web's first `pages` page URLs split over one process per core, each fetching with
 * undici's `request` and extracting links with htmlparser2 (bench/ceiling/ceiling-worker.ts). Timed from
 * the first spawn to the last exit.
 */
export async function runCeiling(web: BenchWebProcess, pages: number): Promise<CrawlRun> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-ceiling-'));
  const urls = web.pageUrls(pages);
  const hosts = Object.fromEntries(web.hosts.map((h) => [h.name, h.ip]));
  const n = cpus().length;
  const jobs = Array.from({ length: n }, (_, k) => {
    const file = join(dir, `job-${k}.json`);
    writeFileSync(file, JSON.stringify({ urls: urls.filter((_, i) => i % n === k), hosts, concurrency: CONCURRENCY }));
    return file;
  });
  const children = jobs.map((job) => spawn(process.execPath, [join(__dirname, '../ceiling/ceiling-worker.js'), job], { stdio: ['ignore', 'ignore', 'inherit'] }));
  const meter = new RunMeter(children.map((c, i) => ({ name: `ceiling ${i + 1}`, pid: () => c.pid })));
  const codes = await Promise.all(children.map(exited));
  const run = await meter.finish(web, {
    id: 'ceiling',
    label: 'ceiling: undici request + htmlparser2',
    settings: `${pages} page URLs, ${n} processes (one per core), ${CONCURRENCY} requests in flight each, 1 per host; no robots.txt, storage or dedup`,
    complete: codes.every((c) => c === 0),
  });
  rmSync(dir, { recursive: true, force: true });
  return run;
}
