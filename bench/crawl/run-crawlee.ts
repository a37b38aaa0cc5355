import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CrawlRun } from '../report/results';
import type { BenchWebProcess } from '../web/bench-web-process';
import { exited, RunMeter } from './measure';

export interface PeerOptions {
  id: string;
  label: string;
  /** maxRequestsPerCrawl. */
  pages: number;
  /** sameDomainDelaySecs; absent: Crawlee's default (none). */
  sameDomainDelaySecs?: number;
  /** The run is stopped after this long, and reported as cut off. */
  timeoutMs: number;
}

/** The peer, Crawlee's CheerioCrawler (bench/peer/crawlee-runner.ts), in its own process, timed from start to exit. */
export async function runCrawlee(web: BenchWebProcess, options: PeerOptions): Promise<CrawlRun> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-crawlee-'));
  const job = join(dir, 'job.json');
  writeFileSync(
    job,
    JSON.stringify({
      seeds: web.seeds(),
      hosts: Object.fromEntries(web.hosts.map((h) => [h.name, h.ip])),
      maxRequests: options.pages,
      sameDomainDelaySecs: options.sameDomainDelaySecs,
      storageDir: join(dir, 'storage'),
    }),
  );
  const log = createWriteStream(join(dir, 'stderr.log'));
  const child = spawn(process.execPath, [join(__dirname, '../peer/crawlee-runner.js'), job], { stdio: ['ignore', 'pipe', 'pipe'] });
  const meter = new RunMeter([{ name: 'crawlee', pid: () => child.pid }]);
  let stdout = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.pipe(log);
  let cutOff = false;
  const timer = setTimeout(() => {
    cutOff = true;
    child.kill('SIGKILL');
  }, options.timeoutMs);
  const code = await exited(child);
  clearTimeout(timer);
  const delay = options.sameDomainDelaySecs ? `sameDomainDelaySecs ${options.sameDomainDelaySecs}` : 'no delay (default)';
  const run = await meter.finish(web, {
    id: options.id,
    label: options.label,
    settings: `maxRequestsPerCrawl ${options.pages}, ${delay}, default concurrency, robots.txt not read (default)`,
    complete: code === 0,
    notes: cutOff ? [`stopped after ${options.timeoutMs / 1000} s, unfinished`] : code === 0 ? [`Crawlee: ${stdout.trim()}`] : [`exit code ${code}`],
  });
  rmSync(dir, { recursive: true, force: true });
  return run;
}
