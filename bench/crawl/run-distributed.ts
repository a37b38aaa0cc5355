import { join } from 'node:path';
import { createDatabase, dropDatabase, POSTGRES_URL } from '@crawler/records/testing';
import { isClusterUrl } from '@crawler/redis';
import { TestWebCluster } from '../../test/support/test-web-cluster';
import type { CrawlRun } from '../report/results';
import type { BenchWebProcess } from '../web/bench-web-process';
import { RunMeter, type Watched } from './measure';
import { PostgresMeter } from './postgres-meter';
import { scriptNames } from './redis-breakdown';
import type { OursOptions } from './run-embedded';
import { keyMemoryPerMaster } from './redis-key-memory';
import { RedisMeter, type RedisServer } from './redis-meter';

/**
 * How often the run asks the control plane whether the crawl is complete. GET /status is the dashboard's
 * whole picture, the frontier's figures read from every shard among it (14 commands a shard: ~900 on a
 * cluster's 64 shards); polled 4 times a second, the control plane alone spent ≈ 0.7 CPU ms per page of the
 * cluster run on it (≈ 0.2 on one node). Once a second adds at most a second to a run's time.
 */
const STATUS_POLL_MS = 1000;

/**
 * Ours, distributed: every service its own process (one of each), BullMQ and the state on `redisUrl` (one
 * node or a Redis Cluster), page bodies on the S3-compatible server, and the per-page records, as the
 * deployments keep them, in a PostgreSQL database of the run's own (`records: 'redis'` keeps them in Redis
 * hashes instead). Timed from the seeds' submission to the control plane's "complete"; Redis (each master
 * and replica of a cluster), the S3 server and PostgreSQL are measured apart, as infrastructure. The run's
 * keys are deleted after it, on every master, and its database dropped.
 */
export async function runDistributed(web: BenchWebProcess, options: OursOptions & { redisUrl: string; records: 'postgres' | 'redis' }): Promise<CrawlRun> {
  const database = options.records === 'postgres' ? await runDatabase() : undefined;
  try {
    return await crawl(web, options, database?.url);
  } finally {
    if (database) await dropDatabase(database.name);
  }
}

async function runDatabase(): Promise<{ name: string; url: string }> {
  try {
    return await createDatabase('bench');
  } catch (error) {
    throw new Error(
      `the distributed runs keep their records in PostgreSQL, and the server of POSTGRES_URL (${POSTGRES_URL}) could not create their database: ${(error as Error).message}. Start PostgreSQL, or set BENCH_RECORDS=redis.`,
    );
  }
}

async function crawl(web: BenchWebProcess, options: OursOptions & { redisUrl: string }, recordsUrl: string | undefined): Promise<CrawlRun> {
  const cluster = new TestWebCluster(web);
  // A service that did not start leaves the others running until the cluster is closed.
  const starting = cluster.start({
    env: {
      ...(recordsUrl ? { RECORDS_URL: recordsUrl } : {}),
      REDIS_URL: options.redisUrl,
      URL_FILTER_MAX_DEPTH: '1000000',
      FRONTIER_MIN_DELAY_MS: String(options.delayMs),
      FRONTIER_MAX_PAGES: String(options.pages),
      ...options.env,
    },
  });
  await starting.catch(async (error) => {
    await cluster.close();
    throw error;
  });
  const redis = new RedisMeter(options.redisUrl, process.env.BENCH_REDIS_BREAKDOWN === '1' ? scriptNames(join(__dirname, '../../libs')) : undefined);
  const servers = await redis.servers();
  const redisSetup = await redis.describe();
  await redis.start();
  const postgres = recordsUrl ? new PostgresMeter() : undefined;
  const meter = new RunMeter([
    ...cluster.services.map((s) => ({ name: s.name, pid: () => s.process.pid })),
    ...servers.map(watchedServer),
    { name: 's3 server', pid: () => cluster.s3Pid, infrastructure: true },
  ]);
  await cluster.seed(web.seeds());
  const status = await cluster.until((s) => s.complete, 1_800_000, STATUS_POLL_MS);
  const seconds = meter.elapsed();
  const redisFigures = await redis.stop();
  const postgresCpuMs = postgres?.stop();
  const run = await meter.finish(web, {
    id: options.id,
    label: options.label,
    settings: `FRONTIER_MAX_PAGES=${options.pages}, delay ${options.delayMs} ms, 1 request per host, robots.txt obeyed; ${cluster.services.length} processes; records in ${recordsUrl ? 'PostgreSQL' : 'Redis'}; Redis: ${redisSetup}`,
    complete: status.complete === true,
    seconds,
  });
  // Before close() deletes the keys.
  const keysBytesPerMaster = isClusterUrl(options.redisUrl) ? await keyMemoryPerMaster(options.redisUrl, cluster.prefix) : undefined;
  await redis.close();
  await cluster.close();
  const infrastructure = [
    ...(run.infrastructure ?? []),
    ...(postgresCpuMs === undefined ? [] : [{ name: 'postgresql (every process)', cpuMs: postgresCpuMs, peakRssBytes: 0 }]),
  ];
  return { ...run, infrastructure, redis: { ...redisFigures, ...(keysBytesPerMaster ? { keysBytesPerMaster } : {}) } };
}

/** The one node keeps its name of old ('redis-server'); a cluster's servers are named by role and address. */
function watchedServer(server: RedisServer): Watched {
  const name = server.role === 'node' ? 'redis-server' : `redis ${server.role} ${server.address}`;
  return { name, pid: () => server.pid, infrastructure: true };
}
