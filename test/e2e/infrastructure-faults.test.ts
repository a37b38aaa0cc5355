import { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { leftovers, report } from '../support/crawl-faults';
import { crawlThroughOutage, expectRecovered, row } from '../support/outage-crawl';
import { freePort, kill, PrivateRedis, spawnUntil } from '../support/private-servers';
import { removeTempDirs, tempDir } from '../support/temp-dirs';

/**
 * The infrastructure fails under a running crawl: the Redis server crashes (SIGKILL, AOF on) and comes back
 * on the same port and directory; the S3 server stops and comes back on the same port and directory. While
 * it is down every service stays up, those that use it answer 503 on /health/ready naming it, the control
 * plane stays ready (degraded) and its status answers within its bound naming it; once it is back the crawl
 * completes with nothing lost. The shared Redis (6379) is never touched: the Redis crash runs on a private
 * redis-server.
 *
 * With CRASH_REPORT=1 each crawl prints one JSON line of its figures.
 */

/** scripts/s3-server.js on a fixed port and directory, restartable. */
class RestartableS3 {
  readonly dir = tempDir('s3-fault-');
  process?: ChildProcess;
  url = '';
  constructor(readonly port: number) {}

  async start(): Promise<void> {
    const script = join(__dirname, '../../scripts/s3-server.js');
    this.process = await spawnUntil(process.execPath, [script], { S3_PORT: String(this.port), S3_DIR: this.dir }, /listening on \S+/);
    this.url = `http://S3RVER:S3RVER@127.0.0.1:${this.port}`;
  }

  stop(): Promise<void> {
    return kill(this.process, 'SIGTERM');
  }
}

const rows: unknown[] = [];
afterAll(() => {
  report('infrastructure-faults', rows);
  removeTempDirs();
});

/**
 * The old retry budget in these tests: 5 attempts, backoff from QUEUE_BACKOFF_MS = 200 ms doubled, about 3 s
 * of waits in all (production: about 31 s from 1 s). A longer outage used to put the messages that met it
 * in the failed set, with their pages missing until an operator replayed them.
 */
const SHORT_RETRIES_ENV = { QUEUE_ATTEMPTS: '5', QUEUE_BACKOFF_MS: '200', QUEUE_INFRA_BACKOFF_MAX_MS: '1000' };
const LONG_OUTAGE_MS = 8000;

describe('infrastructure faults mid-crawl', () => {
  it('Redis crashes (SIGKILL, AOF on) and restarts on the same port and directory: the crawl completes, nothing lost', async () => {
    const redis = new PrivateRedis(await freePort());
    await redis.start();
    try {
      const outcome = await crawlThroughOutage(
        21,
        { env: { REDIS_URL: redis.url } },
        'redis',
        () => redis.crash(),
        () => redis.start(),
        LONG_OUTAGE_MS,
        true,
      );
      rows.push(row('redis-restart', outcome));
      expectRecovered(outcome, 'redis');
      // While Redis was down the status answered at once (never the 10 s and the 500 of a reading waiting on
      // Redis), with the last figures it had and Redis named as down.
      expect(outcome.statusesWhileDown.length).toBeGreaterThan(2);
      expect(outcome.statusesWhileDown.filter((s) => s.ms === null || s.ms > 3000)).toEqual([]);
      expect(outcome.statusesWhileDown.some((s) => s.status.outages.some((o: any) => o.dependency === 'redis') && s.status.stale)).toBe(true);
      // The outage was logged once or so by each service, not once per reconnect attempt or failed call.
      expect(Object.entries(outcome.linesWhileDown).filter(([, lines]) => lines > 10)).toEqual([]);
      // The cluster CLI's `seed --wait` kept waiting through it, and ended with the crawl.
      const cli = outcome.cli!;
      expect(cli.stderr).not.toMatch(/could not give its status/);
      expect(cli.exitedAt).toBeGreaterThan(outcome.upAt);
      const last = JSON.parse(cli.stdout.trim().split('\n').at(-1)!);
      expect({ pending: last.pending, code: cli.code }).toEqual({ pending: 0, code: last.complete ? 0 : 1 });
    } finally {
      await redis.crash();
    }
  }, 240_000);

  it('the S3 server is down longer than every attempt of a message: the outage is waited out and named, every page stored, nothing failed', async () => {
    const s3 = new RestartableS3(await freePort());
    await s3.start();
    try {
      const outcome = await crawlThroughOutage(
        23,
        { s3Url: s3.url, env: SHORT_RETRIES_ENV },
        's3',
        () => s3.stop(),
        () => s3.start(),
        LONG_OUTAGE_MS,
      );
      rows.push(row('s3-long-outage', outcome));
      expectRecovered(outcome, 's3');
      // While it was down the status said what the crawl waited on, from when S3 was first found down for as
      // long as it stayed down (the consumers' breakers opening and closing meanwhile); it never called itself complete.
      const statuses = outcome.statusesWhileDown.map((s) => s.status).filter(Boolean);
      const first = statuses.findIndex((s) => s.outages?.some((o: any) => o.dependency === 's3'));
      expect(first).toBeGreaterThanOrEqual(0);
      const unnamed = statuses.slice(first).filter((s) => !s.outages.some((o: any) => o.dependency === 's3') || !/s3 unavailable since /.test(s.waitingOn));
      expect(unnamed.map((s) => ({ at: s.at, waitingOn: s.waitingOn }))).toEqual([]);
      expect(statuses.slice(first).length).toBeGreaterThan(5);
      expect(statuses.every((s) => !s.complete)).toBe(true);
      // Nothing ended in the failed set: the crawl completed by itself, with nothing for an operator to replay.
      expect(leftovers(outcome.status).failed).toBe(0);
      expect(outcome.status.complete).toBe(true);
      expect(outcome.status.waitingOn).toBeNull();
      expect(Object.values(outcome.replayed).reduce((a, b) => a + b, 0)).toBe(0);
      // A page whose body could not be staged is retried from the answer kept for it: counted once, as the
      // test web answered it once, however many deliveries the outage cost.
      expect({ fetched: outcome.status.totals.fetched, '2xx': outcome.status.totals['status.2xx'] }).toEqual({
        fetched: outcome.webRequests.pages,
        '2xx': outcome.webRequests.pages2xx,
      });
    } finally {
      await s3.stop();
    }
  }, 240_000);

  it('the S3 server stops and restarts on the same port and directory: the crawl completes, every page stored', async () => {
    const s3 = new RestartableS3(await freePort());
    await s3.start();
    try {
      const outcome = await crawlThroughOutage(
        22,
        { s3Url: s3.url },
        's3',
        () => s3.stop(),
        () => s3.start(),
      );
      rows.push(row('s3-restart', outcome));
      expectRecovered(outcome, 's3');
    } finally {
      await s3.stop();
    }
  }, 240_000);
});
