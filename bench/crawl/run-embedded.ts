import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CrawlRun } from '../report/results';
import type { BenchWebProcess } from '../web/bench-web-process';
import { clearPrefix } from '../../test/support/redis-prefix';
import { profileArgs } from '../../test/support/service-processes';
import { ASK_ONCE_ENV, ONE_ADDRESS_ENV } from '../../test/support/test-web-cluster';
import { exited, RunMeter } from './measure';

export interface OursOptions {
  id: string;
  label: string;
  /** Pages to fetch (--max-pages). */
  pages: number;
  /** Politeness delay between two requests to one host, ms (--delay). */
  delayMs: number;
  env?: Record<string, string>;
  /** hosts(5) lines to crawl by instead of the web's own (every host on its own address). */
  hostsFile?: string;
  /** Queues and state in this Redis under a prefix of the run's own (--redis, the resumable embedded crawl), not in memory. */
  redisUrl?: string;
}

/**
 * Ours, embedded: `crawl` in one process (memory queues and stores, or with redisUrl Redis ones; pages on disk), from the web's seeds,
 * every host in scope, robots.txt obeyed, one request per host at a time. Timed from process start to exit.
 */
export async function runEmbedded(web: BenchWebProcess, options: OursOptions): Promise<CrawlRun> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-embedded-'));
  const prefix = options.redisUrl ? `bench-${randomBytes(4).toString('hex')}` : undefined;
  const hostsFile = join(dir, 'hosts');
  const seedsFile = join(dir, 'seeds');
  writeFileSync(hostsFile, options.hostsFile ?? web.hostsFile());
  writeFileSync(seedsFile, web.seeds().join('\n'));
  const args = [
    ...profileArgs(),
    join(__dirname, '../../apps/crawl/src/main.js'),
    '--seeds-file',
    seedsFile,
    '--scope',
    'any',
    '--max-depth',
    '1000000',
    '--max-pages',
    String(options.pages),
    '--delay',
    String(options.delayMs / 1000),
    '--hosts-file',
    hostsFile,
    '--allow-private',
    '--out',
    join(dir, 'out'),
    '--json',
    ...(prefix ? ['--redis', options.redisUrl!, '--prefix', prefix] : []),
  ];
  const log = createWriteStream(join(dir, 'stderr.log'));
  const child = spawn(process.execPath, args, {
    env: { ...process.env, REDIS_URL: '', S3_URL: '', ...ONE_ADDRESS_ENV, ...ASK_ONCE_ENV, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const meter = new RunMeter([{ name: 'crawl', pid: () => child.pid }]);
  let stdout = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.pipe(log);
  const code = await exited(child);
  // Stopped by the page budget (exit 4) is the run's end as much as a crawl of the whole web (0); work left
  // in the failed set is not.
  const ended = code === 0 || code === 4;
  const summary = ended ? JSON.parse(stdout) : undefined;
  const run = await meter.finish(web, {
    id: options.id,
    label: options.label,
    settings: `--max-pages ${options.pages}, delay ${options.delayMs} ms, 1 request per host, robots.txt obeyed${prefix ? ', --redis' : ''}`,
    complete: ended && !summary.failed,
    notes: ended ? undefined : [`exit code ${code}`],
  });
  rmSync(dir, { recursive: true, force: true });
  if (prefix) await clearPrefix(prefix, options.redisUrl!);
  return run;
}
