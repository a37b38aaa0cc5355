import { consumerOf } from '@crawler/contracts';
import { TestWeb } from '../web/test-web';
import { startService, stopService } from './service-processes';
import { TestWebCluster } from './test-web-cluster';

/**
 * Helpers for the fault-injection tests (service-crash, infrastructure-faults): a status poll that survives
 * the control plane's own death, process kill/restart with timings, and the crawl's figures judged from the
 * test web's request log.
 */

/** Env of a fast-recovering test crawl, in the production proportions (see frontier-crash.test.ts). */
export const FAST_RECOVERY_ENV: Record<string, string> = {
  QUEUE_STALLED_MS: '3000',
  DOWNLOADER_TOTAL_TIMEOUT_MS: '5000',
  // Three missed beats (3 s) before a downloader is presumed gone: under CI load a live one can stall 1.5 s, and
  // a false departure hands its leases to another downloader, fetching those URLs twice.
  DOWNLOADER_HEARTBEAT_MS: '1000',
  FRONTIER_LEASE_MS: '15000',
  BREAKER_COOLDOWN_MS: '2000',
};

/**
 * A started cluster: on a loaded machine a service can miss startService's 30 s deadline, so one failed
 * start is retried once with a fresh cluster (the failed one is closed, its processes stopped).
 */
export async function startCluster(web: TestWeb, options: Parameters<TestWebCluster['start']>[0]): Promise<TestWebCluster> {
  for (let attempt = 1; ; attempt++) {
    const cluster = new TestWebCluster(web);
    try {
      return await cluster.start(options);
    } catch (error) {
      await cluster.close();
      if (attempt >= 2) throw error;
    }
  }
}

/**
 * A fault test's crawl: a test web of 30 hosts from `seed` and a cluster started on it (startCluster), handed
 * to `crawl`. If the crawl fails, the services' last lines say why; both are closed after, either way.
 */
export async function crawlOnCluster<T>(
  seed: number,
  options: Parameters<TestWebCluster['start']>[0],
  crawl: (web: TestWeb, cluster: TestWebCluster) => Promise<T>,
): Promise<T> {
  const web = await TestWeb.start({ hosts: 30, seed });
  let cluster: TestWebCluster | undefined;
  try {
    cluster = await startCluster(web, options);
    return await crawl(web, cluster);
  } catch (error) {
    printServiceTails(cluster);
    throw error;
  } finally {
    await cluster?.close();
    await web.close();
  }
}

/**
 * Waits until the crawl has settled: complete, or nothing left to do but failed work (which `complete` never
 * hides). Then sends the work that failed for good round again, as an operator would (npm run failed --
 * --replay), and waits for completion once more.
 */
export async function settleAndReplayFailed(cluster: TestWebCluster, settleMs: number): Promise<{ status: any; replayed: Record<string, number>; afterReplay: any }> {
  const settled = (s: any) => s.complete || (s.pending === 0 && Object.keys(s.failed ?? {}).length > 0);
  const status = await waitFor(cluster, settled, settleMs, 'completion', 500);
  const { replayed } = (await (
    await fetch(`${cluster.control}/failed/replay`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
  ).json()) as { replayed: Record<string, number> };
  const afterReplay = await waitFor(cluster, (s) => s.complete, 60_000, 'completion after the replay', 500);
  return { status, replayed, afterReplay };
}

/** The last lines each service printed, on stderr: what a failed fault test needs to say why. */
function printServiceTails(cluster: TestWebCluster | undefined, lines = 20): void {
  for (const s of cluster?.services ?? []) process.stderr.write(`--- ${s.name}\n${s.output.slice(-lines).join('')}`);
}

/** The control plane's status, or undefined while it (or Redis) cannot answer. */
export async function statusOrUndefined(cluster: TestWebCluster, timeoutMs = 3000): Promise<any> {
  try {
    const response = await fetch(`${cluster.control}/status`, { signal: AbortSignal.timeout(timeoutMs) });
    return response.ok ? await response.json() : undefined;
  } catch {
    return undefined;
  }
}

/** Polls until `done(status)`; throws with the last status on the deadline. */
export async function waitFor(cluster: TestWebCluster, done: (status: any) => boolean, timeoutMs: number, what: string, pollMs = 200): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let status: any;
  for (;;) {
    status = await statusOrUndefined(cluster);
    if (status && done(status)) return status;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last status: ${JSON.stringify(status?.totals ?? status)}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/** The test web's clock (LoggedRequest.at / endAt). */
function webNow(): number {
  return performance.timeOrigin + performance.now();
}

/** Requests the test web had received but not finished answering at `time`. */
function inFlightAt(web: TestWeb, time: number): number {
  return web.requests.filter((r) => r.at <= time && (r.endAt === undefined || r.endAt > time)).length;
}

export interface FaultRecord {
  service: string;
  signal: 'SIGKILL' | 'SIGTERM';
  /** Pages fetched (crawl totals) when the signal was sent. */
  fetchedAtFault: number;
  /** Requests the test web was answering at the signal. */
  webInFlight: number;
  /** URLs leased by the frontier (dispatched, outcome not yet back) just before the signal. */
  leased: number;
  /** Active jobs of the queues the service consumes, just before the signal. */
  activeJobs: number;
  /** SIGTERM: ms from the signal to the exit; exit code (SIGKILL: -1). */
  exitMs: number;
  exitCode: number | null;
  restartMs: number;
}

function activeJobs(status: any, service: string): number {
  return Object.entries<any>(status?.queues ?? {})
    .filter(([queue]) => consumerOf(queue)?.name === service)
    .reduce((n, [, counts]) => n + (counts.active ?? 0), 0);
}

/** Sends `signal` to the cluster's `service`, waits for its exit, restarts it in its slot. */
export async function faultService(web: TestWeb, cluster: TestWebCluster, service: string, signal: 'SIGKILL' | 'SIGTERM'): Promise<FaultRecord> {
  const i = cluster.services.findIndex((s) => s.name === service);
  if (i < 0) throw new Error(`no ${service} in the cluster`);
  const before = await statusOrUndefined(cluster);
  const time = webNow();
  const started = Date.now();
  let exitCode: number | null;
  if (signal === 'SIGTERM') {
    exitCode = await stopService(cluster.services[i], 30_000);
  } else {
    const child = cluster.services[i].process;
    child.removeAllListeners('exit');
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
    exitCode = -1;
  }
  const exitMs = Date.now() - started;
  const webInFlight = inFlightAt(web, time);
  const restartStarted = Date.now();
  cluster.services[i] = await startService(service, cluster.env);
  return {
    service,
    signal,
    fetchedAtFault: before?.totals?.fetched ?? -1,
    webInFlight,
    leased: before?.inFlight ?? -1,
    activeJobs: activeJobs(before, service),
    exitMs,
    exitCode,
    restartMs: Date.now() - restartStarted,
  };
}

export interface CrawlFigures {
  /** Reachable allowed pages: what must be fetched. */
  expected: number;
  /** Of those, fetched at least once. */
  fetched: number;
  /** Reachable pages never fetched, and their URLs. */
  lost: number;
  lostUrls: string[];
  /** Reachable pages fetched more than once, and the extra requests in all. */
  fetchedTwice: number;
  extraRequests: number;
  /** The URLs fetched more than once, to say which when a test fails. */
  twiceUrls: string[];
  /** Disallowed pages fetched (must be 0). */
  disallowedFetched: number;
}

export function crawlFigures(web: TestWeb): CrawlFigures {
  const counts = web.requestCountByUrl();
  const reachable = [...web.expected.reachable];
  const lostUrls = reachable.filter((url) => !counts.has(url));
  const twice = reachable.filter((url) => (counts.get(url) ?? 0) > 1);
  return {
    expected: reachable.length,
    fetched: reachable.length - lostUrls.length,
    lost: lostUrls.length,
    lostUrls,
    fetchedTwice: twice.length,
    twiceUrls: twice,
    extraRequests: twice.reduce((n, url) => n + counts.get(url)! - 1, 0),
    disallowedFetched: [...web.expected.disallowed].filter((url) => counts.has(url)).length,
  };
}

/** Jobs still active or failed for good in any queue (after completion both must be 0). */
export function leftovers(status: any): { active: number; failed: number } {
  const counts = Object.values<any>(status?.queues ?? {});
  return {
    active: counts.reduce((n, c) => n + (c.active ?? 0), 0),
    failed: counts.reduce((n, c) => n + (c.failed ?? 0), 0),
  };
}

/** One JSON line on stdout, only when CRASH_REPORT=1. */
export function report(kind: string, rows: unknown[]): void {
  if (process.env.CRASH_REPORT === '1') process.stdout.write(`${JSON.stringify({ report: kind, rows })}\n`);
}
