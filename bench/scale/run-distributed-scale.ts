import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase, dropDatabase } from '@crawler/records/testing';
import { TestWebCluster } from '../../test/support/test-web-cluster';
import { startService } from '../../test/support/service-processes';
import type { ScaleWebProcess } from '../web/scale-web-process';
import { probeNodeOptions } from './process-readings';
import type { ShapeRun } from './scale-sample';
import { ScaleSampler } from './scale-sampler';
import { crawlerEnv, journalFile, reclaimedOf, type ScaleSettings } from './scale-settings';
import { watchCrawl } from './scale-watch';
import { RedisReadings } from './store-readings';

/** How often the run asks the control plane whether the crawl is complete (GET /status reads every shard). */
const STATUS_POLL_MS = 5000;
/** Seeds a request (one POST /seeds of ten thousand hosts' would pass the control plane's body limit). */
const SEED_BATCH = 1000;
/** Nine services starting at once on a busy machine can take more than the tests' 30 s. */
const START_TIMEOUT_MS = 180_000;

/**
 * The distributed shape at scale: every service its own process (one of each), BullMQ and the state on the
 * Redis Cluster, the records in a PostgreSQL database of the run's own, the bodies in an S3 stand-in of its
 * own; seeded with every host's home page, watched until the control plane says complete.
 */
export async function runDistributedScale(web: ScaleWebProcess, settings: ScaleSettings, log: (line: string) => void, stop?: AbortSignal): Promise<ShapeRun> {
  const database = await createDatabase('scale');
  const probeDir = mkdtempSync(join(tmpdir(), 'scale-probe-'));
  const cluster = new TestWebCluster(web);
  let redis: RedisReadings | undefined;
  try {
    await cluster.start({
      env: {
        REDIS_URL: settings.redisClusterUrl,
        RECORDS_URL: database.url,
        FRONTIER_MIN_DELAY_MS: String(settings.delayMs),
        SCALE_PROBE_DIR: probeDir,
        SCALE_PROBE_MS: String(Math.min(settings.sampleMs, 60_000)),
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${probeNodeOptions()}`.trim(),
        ...crawlerEnv(settings),
      },
      startTimeoutMs: START_TIMEOUT_MS,
    });
    log(`distributed: ${cluster.services.length} processes on ${settings.redisClusterUrl}, records in ${database.name}, prefix ${cluster.prefix}`);
    redis = new RedisReadings(settings.redisClusterUrl, cluster.prefix);
    const port = (name: string) => cluster.services.find((s) => s.name === name)!.port;
    const sampler = new ScaleSampler(
      web,
      {
        processes: () => cluster.services.map((s) => ({ name: s.name, pid: s.process.pid })),
        redis,
        postgresUrl: database.url,
        storeDir: cluster.s3Directory,
        frontierMetrics: () => `http://127.0.0.1:${port('frontier')}/metrics`,
        controlPlane: () => cluster.control,
        journal: journalFile(settings, 'distributed'),
      },
      probeDir,
    );
    const seeds = web.seeds();
    for (let i = 0; i < seeds.length; i += SEED_BATCH) {
      const status = await cluster.seed(seeds.slice(i, i + SEED_BATCH));
      if (status !== 201) throw new Error(`the control plane refused the seeds (${status})`);
    }
    let lastPoll = 0;
    let complete = false;
    let totals: Record<string, number> = {};
    const { ended, resume } = await watchCrawl(web, sampler, {
      sampleMs: settings.sampleMs,
      timeoutMs: settings.timeoutMs,
      killAt: settings.killAt,
      log,
      stop,
      ended: async () => {
        if (Date.now() - lastPoll < STATUS_POLL_MS) return false;
        lastPoll = Date.now();
        const status = await cluster.status().catch(() => undefined);
        if (status?.totals) totals = status.totals;
        complete = status?.complete === true;
        return complete;
      },
      killAndRestart: async () => {
        const inFlight = Math.max(await redis!.leases(), (await web.observe()).inFlight);
        const names = cluster.services.map((s) => s.name);
        await Promise.all(
          cluster.services.map(
            (s) =>
              new Promise<void>((resolve) => {
                s.process.removeAllListeners('exit');
                if (s.process.exitCode !== null || s.process.signalCode !== null) return resolve();
                s.process.once('exit', () => resolve());
                s.process.kill('SIGKILL');
              }),
          ),
        );
        const started = await Promise.allSettled(names.map((name) => startService(name, cluster.env, START_TIMEOUT_MS)));
        cluster.services = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
        const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
        if (failed) throw failed.reason;
        return { inFlight };
      },
    });
    const samples = sampler.samples;
    return {
      shape: 'distributed',
      settings: `${cluster.services.length} processes (${cluster.services.map((s) => s.name).join(', ')}); Redis Cluster ${settings.redisClusterUrl}; records in PostgreSQL; bodies in an S3 stand-in; delay ${settings.delayMs} ms; env ${JSON.stringify(crawlerEnv(settings))}`,
      complete: ended && complete,
      notes: ended ? [] : [stop?.aborted ? 'interrupted' : `not complete after ${(settings.timeoutMs / 1000).toFixed(0)} s (SCALE_TIMEOUT_S)`],
      seconds: samples[samples.length - 1].seconds,
      samples,
      web: await web.observe(),
      lost: await web.lost(),
      reclaimed: reclaimedOf(totals),
      ...(resume ? { resume } : {}),
    };
  } finally {
    await redis?.close().catch(() => undefined);
    await cluster.close().catch(() => undefined);
    await dropDatabase(database.name).catch(() => undefined);
    rmSync(probeDir, { recursive: true, force: true });
  }
}
