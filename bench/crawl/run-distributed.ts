import { TestWebCluster } from '../../test/support/test-web-cluster';
import type { CrawlRun } from '../report/results';
import type { BenchWebProcess } from '../web/bench-web-process';
import { RunMeter } from './measure';
import type { OursOptions } from './run-embedded';
import { RedisMeter } from './redis-meter';

/**
 * Ours, distributed: every service its own process (one of each), BullMQ and the state on the local Redis,
 * page bodies on the S3-compatible server. Timed from the seeds' submission to the control plane's
 * "complete"; Redis and the S3 server are measured apart, as infrastructure.
 */
export async function runDistributed(web: BenchWebProcess, options: OursOptions & { redisUrl: string }): Promise<CrawlRun> {
  const cluster = await new TestWebCluster(web).start({
    env: {
      URL_FILTER_MAX_DEPTH: '1000000',
      FRONTIER_MIN_DELAY_MS: String(options.delayMs),
      FRONTIER_MAX_PAGES: String(options.pages),
      ...options.env,
    },
  });
  const redis = new RedisMeter(options.redisUrl);
  const redisPid = await redis.pid();
  await redis.start();
  const meter = new RunMeter([
    ...cluster.services.map((s) => ({ name: s.name, pid: () => s.process.pid })),
    { name: 'redis-server', pid: () => redisPid, infrastructure: true },
    { name: 's3 server', pid: () => cluster.s3Pid, infrastructure: true },
  ]);
  await cluster.seed(web.seeds());
  const status = await cluster.until((s) => s.complete, 1_800_000);
  const seconds = meter.elapsed();
  const redisFigures = await redis.stop();
  const run = await meter.finish(web, {
    id: options.id,
    label: options.label,
    settings: `FRONTIER_MAX_PAGES=${options.pages}, delay ${options.delayMs} ms, 1 request per host, robots.txt obeyed; ${cluster.services.length} processes`,
    complete: status.complete === true,
    seconds,
  });
  await redis.close();
  await cluster.close();
  return { ...run, redis: redisFigures };
}
