import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3TestServer, startS3TestServer } from '@crawler/content-store/testing';
import { clearPrefix, REDIS_URL } from './redis-prefix';
import { RunningService, SERVICES, startService, stopService } from './service-processes';

/**
 * The distributed shape pointed at the test web: an S3-compatible server, every service its own process
 * (plus `extra` replicas) on the real Redis under a fresh prefix, names resolved through the test web's
 * hosts file. Used by the distributed tests and the benchmark.
 */
/** How soon a test crawl tries a failing robots.txt again. */
export const ROBOTS_ERROR_TTL_MS = '300';
/** How long a test crawl keeps trying a failing robots.txt before it sets the host aside (production: 30 minutes). */
export const ROBOTS_UNREACHABLE_MAX_MS = '1500';

/** The test web's failing robots.txt hosts are retried this often at most, and set aside soon (production: 10 and 30 minutes). */
export const QUICK_ROBOTS_GIVE_UP_ENV = {
  DOWNLOADER_ROBOTS_ERROR_TTL_MS: ROBOTS_ERROR_TTL_MS,
  DOWNLOADER_ROBOTS_UNREACHABLE_MAX_MS: ROBOTS_UNREACHABLE_MAX_MS,
} as const;

/**
 * The test web serves all its hosts from 127.0.0.1 (the shared-address hosts from 127.0.0.2), so the per-IP
 * interval (FRONTIER_PER_IP_INTERVAL_MS, 100 ms by default) would hold a whole test crawl, or the benchmark's,
 * to 10 requests a second. Test crawls turn it off; the per-IP limit still holds, and
 * test/e2e/politeness.test.ts sets the interval to test it.
 */
export const ONE_ADDRESS_ENV = { FRONTIER_PER_IP_INTERVAL_MS: '0' } as const;

/**
 * The test web's `/error` pages answer 500 to every request. A crawl tries such a page again, 30 s and then
 * 60 s later (FRONTIER_TRANSIENT_ATTEMPTS, FRONTIER_RETRY_BACKOFF_MS), which would hold every test crawl open
 * for 1.5 minutes and break the expected crawl's "each URL once". Test crawls of the test web ask once;
 * test/e2e/retry-failed-pages.test.ts tests the retries.
 */
export const ASK_ONCE_ENV = { FRONTIER_TRANSIENT_ATTEMPTS: '1' } as const;

export class TestWebCluster {
  readonly prefix = `cluster-${randomBytes(4).toString('hex')}`;
  services: RunningService[] = [];
  env: Record<string, string> = {};
  private s3?: S3TestServer;
  private dir?: string;

  /** The test web, or any web that can name its hosts' addresses. */
  constructor(private readonly web: { hostsFile(): string }) {}

  get s3Url(): string {
    return this.s3!.url;
  }

  /** The S3 server's process, when the cluster started its own. */
  get s3Pid(): number | undefined {
    return this.s3?.pid;
  }

  /** The directory of the S3 server the cluster started, where the page bodies are. */
  get s3Directory(): string | undefined {
    return this.s3?.directory;
  }

  get control(): string {
    return `http://127.0.0.1:${this.services.find((s) => s.name === 'control-plane')!.port}`;
  }

  /**
   * `env` is merged last (so it may override `REDIS_URL`, e.g. to a private Redis). `s3Url`: an S3 server
   * of the caller's, left running by close(); by default the cluster starts its own. `services`: the processes
   * (see startService), by default one per service of the service map.
   */
  async start(options: { env?: Record<string, string>; services?: readonly string[]; extra?: string[]; s3Url?: string; startTimeoutMs?: number } = {}): Promise<this> {
    // A server of its own: the suite's shared one (S3_URL) holds every earlier test's buckets, and under CI load
    // it answered the services' readiness checks too slowly for a cluster of nine.
    this.s3 = options.s3Url ? { url: options.s3Url, close: async () => undefined } : await startS3TestServer({ private: true });
    this.dir = mkdtempSync(join(tmpdir(), 'cluster-'));
    const hostsFile = join(this.dir, 'hosts');
    writeFileSync(hostsFile, this.web.hostsFile());
    this.env = {
      REDIS_URL,
      S3_URL: this.s3.url,
      S3_BUCKET: this.prefix,
      CRAWLER_PREFIX: this.prefix,
      DNS_HOSTS_FILE: hostsFile,
      DNS_ALLOW_PRIVATE: 'true',
      URL_FILTER_SCOPE: 'any',
      URL_FILTER_MAX_DEPTH: '1000',
      ...QUICK_ROBOTS_GIVE_UP_ENV,
      ...ONE_ADDRESS_ENV,
      ...ASK_ONCE_ENV,
      ...options.env,
    };
    const started = await Promise.allSettled(
      [...(options.services ?? SERVICES), ...(options.extra ?? [])].map((name) => startService(name, this.env, options.startTimeoutMs)),
    );
    this.services = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) {
      // One that did not start fails the start, and the caller, given no cluster, has nothing to close: the
      // services that did start and the S3 server are stopped here, or they would outlive the test file and
      // keep jest's process alive after the run.
      await this.close();
      throw failed.reason;
    }
    return this;
  }

  async seed(urls: string[]): Promise<number> {
    const response = await fetch(`${this.control}/seeds`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ urls }) });
    return response.status;
  }

  async status(): Promise<any> {
    return (await fetch(`${this.control}/status`)).json();
  }

  /** Polls the control plane until `done(status)` or the deadline; answers the last status. */
  async until(done: (status: any) => boolean, timeoutMs: number, pollMs = 250): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    let status;
    do {
      await new Promise((r) => setTimeout(r, pollMs));
      status = await this.status();
    } while (!done(status) && Date.now() < deadline);
    return status;
  }

  /** Waits for the crawl to complete, then stops every service: the last status, the jobs each handled (jobsHandled), their exit codes. */
  async completeAndStop(timeoutMs: number): Promise<{ status: any; handledBy: Record<string, Record<string, number>>; exitCodes: (number | null)[] }> {
    const status = await this.until((s) => s.complete, timeoutMs, 500);
    const handledBy = await this.jobsHandled();
    return { status, handledBy, exitCodes: await this.stopServices() };
  }

  /** Jobs each running process has handled, per queue, from its Prometheus metrics: process name → queue → jobs. */
  private async jobsHandled(): Promise<Record<string, Record<string, number>>> {
    return Object.fromEntries(
      await Promise.all(this.services.map(async (s) => [s.name, jobsHandledPerQueue(await (await fetch(`http://127.0.0.1:${s.port}/metrics`)).text())] as const)),
    );
  }

  /** SIGTERM to every service; answers their exit codes. */
  stopServices(timeoutMs?: number): Promise<(number | null)[]> {
    return Promise.all(this.services.map((s) => stopService(s, timeoutMs)));
  }

  async close(): Promise<void> {
    await this.stopServices(5000);
    await clearPrefix(this.prefix, this.env?.REDIS_URL);
    await this.s3?.close();
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }
}

function jobsHandledPerQueue(metrics: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of metrics.matchAll(/^crawler_queue_jobs_handled_total\{([^}]*)\} (\d+)/gm)) {
    const queue = /queue="([^"]+)"/.exec(m[1])![1];
    out[queue] = (out[queue] ?? 0) + Number(m[2]);
  }
  return out;
}
