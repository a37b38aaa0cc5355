import { isClusterUrl } from '@crawler/redis';
import { TestWebCluster } from '../../test/support/test-web-cluster';
import type { CrawlRun } from '../report/results';
import type { BenchWebProcess } from '../web/bench-web-process';
import { RunMeter, type Watched } from './measure';
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
 * node or a Redis Cluster), page bodies on the S3-compatible server. Timed from the seeds' submission to the
 * control plane's "complete"; Redis (each master and replica of a cluster) and the S3 server are measured
 * apart, as infrastructure. The run's keys are deleted after it, on every master.
 */
export async function runDistributed(web: BenchWebProcess, options: OursOptions & { redisUrl: string }): Promise<CrawlRun> {
  const cluster = await new TestWebCluster(web).start({
    env: {
      REDIS_URL: options.redisUrl,
      URL_FILTER_MAX_DEPTH: '1000000',
      FRONTIER_MIN_DELAY_MS: String(options.delayMs),
      FRONTIER_MAX_PAGES: String(options.pages),
      ...options.env,
    },
  });
  const redis = new RedisMeter(options.redisUrl);
  const servers = await redis.servers();
  await redis.start();
  const meter = new RunMeter([
    ...cluster.services.map((s) => ({ name: s.name, pid: () => s.process.pid })),
    ...servers.map(watchedServer),
    { name: 's3 server', pid: () => cluster.s3Pid, infrastructure: true },
  ]);
  await cluster.seed(web.seeds());
  const status = await cluster.until((s) => s.complete, 1_800_000, STATUS_POLL_MS);
  const seconds = meter.elapsed();
  const redisFigures = await redis.stop();
  const run = await meter.finish(web, {
    id: options.id,
    label: options.label,
    settings: `FRONTIER_MAX_PAGES=${options.pages}, delay ${options.delayMs} ms, 1 request per host, robots.txt obeyed; ${cluster.services.length} processes`,
    complete: status.complete === true,
    seconds,
  });
  // Before close() deletes the keys.
  const keysBytesPerMaster = isClusterUrl(options.redisUrl) ? await keyMemoryPerMaster(options.redisUrl, cluster.prefix) : undefined;
  await redis.close();
  await cluster.close();
  return { ...run, redis: { ...redisFigures, ...(keysBytesPerMaster ? { keysBytesPerMaster } : {}) } };
}

/** The one node keeps its name of old ('redis-server'); a cluster's servers are named by role and address. */
function watchedServer(server: RedisServer): Watched {
  const name = server.role === 'node' ? 'redis-server' : `redis ${server.role} ${server.address}`;
  return { name, pid: () => server.pid, infrastructure: true };
}
