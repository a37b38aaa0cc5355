import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clearPrefix } from '../../test/support/redis-prefix';
import { ASK_ONCE_ENV } from '../../test/support/test-web-cluster';
import { exited } from '../crawl/measure';
import type { ScaleWebProcess } from '../web/scale-web-process';
import { probeNodeOptions } from './process-readings';
import type { ShapeRun } from './scale-sample';
import { ScaleSampler } from './scale-sampler';
import { crawlerEnv, journalFile, reclaimedOf, type ScaleSettings } from './scale-settings';
import { watchCrawl } from './scale-watch';
import { RedisReadings } from './store-readings';

/**
 * The embedded shape at scale: `crawl` in one process, pages on disk (--out), every host in scope, no
 * page budget: it ends when the web is crawled. In memory by default; with SCALE_KILL_AT its queues and state
 * are in Redis (--redis, a prefix of the run's own), so that the process can be killed mid-way and the same
 * command run again to finish the crawl.
 */
export async function runEmbeddedScale(web: ScaleWebProcess, settings: ScaleSettings, log: (line: string) => void, stop?: AbortSignal): Promise<ShapeRun> {
  const dir = mkdtempSync(join(tmpdir(), 'scale-embedded-'));
  const probeDir = join(dir, 'probe');
  const out = join(dir, 'out');
  const hostsFile = join(dir, 'hosts');
  const seedsFile = join(dir, 'seeds');
  mkdirSync(probeDir);
  writeFileSync(hostsFile, web.hostsFile());
  writeFileSync(seedsFile, web.seeds().join('\n'));
  const prefix = settings.killAt !== undefined ? `scale-${randomBytes(4).toString('hex')}` : undefined;
  const args = [
    join(__dirname, '../../apps/crawl/src/main.js'),
    '--seeds-file',
    seedsFile,
    '--scope',
    'any',
    '--max-depth',
    '1000000',
    '--delay',
    String(settings.delayMs / 1000),
    '--hosts-file',
    hostsFile,
    '--allow-private',
    '--out',
    out,
    '--json',
    ...(prefix ? ['--redis', settings.redisUrl, '--prefix', prefix] : []),
  ];
  const env = {
    ...process.env,
    REDIS_URL: '',
    S3_URL: '',
    ...ASK_ONCE_ENV,
    ...crawlerEnv(settings),
    SCALE_PROBE_DIR: probeDir,
    SCALE_PROBE_MS: String(Math.min(settings.sampleMs, 60_000)),
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${probeNodeOptions()}`.trim(),
  };
  const stderrLog = createWriteStream(join(dir, 'stderr.log'));
  let stdout = '';
  const start = (): ChildProcess => {
    stdout = '';
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (chunk) => (stdout += chunk));
    child.stderr!.pipe(stderrLog, { end: false });
    return child;
  };
  let child = start();
  let code: number | null = null;
  const redis = prefix ? new RedisReadings(settings.redisUrl, prefix) : undefined;
  log(`embedded: one process, pages in ${out}${prefix ? `, queues and state in ${settings.redisUrl} under ${prefix}` : ', queues and state in memory'}`);
  try {
    const sampler = new ScaleSampler(
      web,
      { processes: () => [{ name: 'crawl', pid: child.pid }], redis, storeDir: out, journal: journalFile(settings, 'embedded') },
      probeDir,
    );
    const { ended, resume } = await watchCrawl(web, sampler, {
      sampleMs: settings.sampleMs,
      timeoutMs: settings.timeoutMs,
      killAt: prefix ? settings.killAt : undefined,
      log,
      stop,
      ended: async () => {
        if (child.exitCode === null && child.signalCode === null) return false;
        code = await exited(child);
        return true;
      },
      killAndRestart: async () => {
        const inFlight = Math.max((await web.observe()).inFlight, (await redis?.leases()) ?? 0);
        const gone = exited(child);
        child.kill('SIGKILL');
        await gone;
        child = start();
        return { inFlight };
      },
    });
    if (!ended) {
      child.kill('SIGKILL');
      await exited(child);
    }
    const samples = sampler.samples;
    const notes = ended
      ? code === 0
        ? []
        : [`exit code ${code}: ${stdout.slice(0, 500)}`]
      : [stop?.aborted ? 'interrupted' : `not complete after ${(settings.timeoutMs / 1000).toFixed(0)} s (SCALE_TIMEOUT_S)`];
    return {
      shape: 'embedded',
      settings: `crawl ${args.slice(1).join(' ')}; env ${JSON.stringify(crawlerEnv(settings))}`,
      complete: ended && code === 0,
      notes,
      seconds: samples[samples.length - 1].seconds,
      samples,
      web: await web.observe(),
      lost: await web.lost(),
      reclaimed: reclaimedOf(summaryTotals(stdout)),
      ...(resume ? { resume } : {}),
    };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await redis?.close().catch(() => undefined);
    if (prefix) await clearPrefix(prefix, settings.redisUrl).catch(() => undefined);
    stderrLog.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The totals of the crawl's --json summary (none when it did not finish). */
function summaryTotals(stdout: string): Record<string, number> {
  try {
    return JSON.parse(stdout).totals ?? {};
  } catch {
    return {};
  }
}
