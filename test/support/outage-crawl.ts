import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { storesUsedBy } from '@crawler/contracts';
import { MinioContentStore } from '@crawler/content-store';
import { collectKeys } from '@crawler/content-store/testing';
import { expectedStoredPages } from '../e2e/crawl-expectations';
import type { TestWeb } from '../web/test-web';
import { crawlFigures, CrawlFigures, crawlOnCluster, FAST_RECOVERY_ENV, leftovers, settleAndReplayFailed, statusOrUndefined, waitFor } from './crawl-faults';
import { storedPages } from './stored-pages';

/**
 * A crawl through an outage of its infrastructure (Redis, a Redis Cluster, S3): the crawl runs, a dependency
 * goes away for a while and comes back, and what every service said meanwhile and what the crawl ended with
 * are collected for the tests to judge.
 */

/** Politeness delay of the outage crawls: slow enough that the outage lands mid-crawl. */
export const OUTAGE_DELAY_MS = 1000;
/** How long a dependency stays down by default. */
const OUTAGE_MS = 4000;
/** The cluster CLI, built. */
const CLUSTER_CLI = join(__dirname, '../../dist/apps/crawl/src/cluster-cli.js');

/**
 * Whether a service's readiness depends on `dependency`: Redis, every pipeline service; S3 (the content
 * store) or PostgreSQL (the records), those that use it. The control plane never: it stays ready, degraded.
 */
function readinessNeeds(service: string, dependency: string): boolean {
  if (service === 'control-plane') return false;
  return dependency === 'redis' || storesUsedBy(service).has(dependency === 's3' ? 'content' : 'records');
}

/** `seed --wait` of the cluster CLI, run to its end: what it printed and its exit code. */
interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** ms since the epoch it exited. */
  exitedAt: number;
}

function seedAndWait(control: string, seeds: string[]): Promise<CliRun> {
  const child = spawn(process.execPath, [CLUSTER_CLI, 'seed', '--control', control, '--wait', ...seeds], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr, exitedAt: Date.now() })));
}

/** /health/ready of a service: its status code and the dependencies it names as failing. */
async function readiness(port: number): Promise<{ code: number; failing: string[] }> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/health/ready`, { signal: AbortSignal.timeout(5000) });
    const body: any = await response.json();
    return { code: response.status, failing: body.failing ?? body.message?.failing ?? [] };
  } catch (error) {
    return { code: 0, failing: [String(error)] };
  }
}

/** Polls a service's readiness until `ok(answer)` or the deadline; answers the last reading. */
export async function readinessUntil(port: number, ok: (r: { code: number; failing: string[] }) => boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  let r = await readiness(port);
  while (!ok(r) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    r = await readiness(port);
  }
  return r;
}

export interface FaultOutcome {
  /** The crawl's CRAWLER_PREFIX (its records' schema with RECORDS_URL). */
  prefix: string;
  figures: CrawlFigures;
  status: any;
  fetchedAtFault: number;
  /** Readiness of every service while the dependency was down, and after the crawl. */
  whileDown: Record<string, { code: number; failing: string[] }>;
  after: Record<string, { code: number; failing: string[] }>;
  /** Services that exited on their own during the crawl (must be none). */
  died: string[];
  storedPages: number;
  /** The URLs of the pages in the page store. */
  storedUrls: string[];
  expectedStored: number;
  stagingLeft: number;
  /** Failed messages sent round again after the crawl (POST /failed/replay), by queue. */
  replayed: Record<string, number>;
  /** The crawl's status once the replayed messages were handled. */
  afterReplay: any;
  /** The first status read while the dependency was down that named it in `waitingOn` (else the last one read). */
  statusWhileDown: any;
  /** Every status read while the dependency was down, each with how long it took to answer (null: no answer within 5 s). */
  statusesWhileDown: { ms: number | null; status: any }[];
  /** When it went down and came back (ms since the epoch). */
  downAt: number;
  upAt: number;
  /** Lines the services printed that are not one JSON object, and the lines of each service while it was down. */
  notJson: string[];
  linesWhileDown: Record<string, number>;
  /** With `seedWithCli`: the cluster CLI's `seed --wait` that submitted the seeds, run to its end. */
  cli?: CliRun;
  /** Requests the test web answered, robots.txt left out (what the crawl's `fetched` counts), and those it answered 2xx. */
  webRequests: { pages: number; pages2xx: number };
}

export function row(fault: string, o: FaultOutcome) {
  return {
    fault,
    fetchedAtFault: o.fetchedAtFault,
    expected: o.figures.expected,
    fetched: o.figures.fetched,
    lost: o.figures.lost,
    lostUrls: o.figures.lostUrls,
    fetchedTwice: o.figures.fetchedTwice,
    extraRequests: o.figures.extraRequests,
    storedPages: o.storedPages,
    expectedStored: o.expectedStored,
    failedJobs: leftovers(o.status).failed,
    failedByQueue: Object.fromEntries(
      Object.entries<any>(o.status.queues ?? {})
        .filter(([, c]) => c.failed > 0)
        .map(([q, c]) => [q, c.failed]),
    ),
    replayed: o.replayed,
    failedAfterReplay: leftovers(o.afterReplay).failed,
    statusMs: o.statusesWhileDown.map((s) => s.ms),
    linesWhileDown: o.linesWhileDown,
  };
}

/**
 * A crawl of a small test web in which `down()` takes a dependency away once a third of the pages are
 * fetched, for OUTAGE_MS, then `up()` brings it back; readiness is read while it is down.
 */
export async function crawlThroughOutage(
  seed: number,
  clusterOptions: { env?: Record<string, string>; s3Url?: string },
  dependency: string,
  down: () => Promise<void>,
  up: () => Promise<void>,
  outageMs = OUTAGE_MS,
  seedWithCli = false,
): Promise<FaultOutcome> {
  const env = { ...FAST_RECOVERY_ENV, FRONTIER_MIN_DELAY_MS: String(OUTAGE_DELAY_MS), ...clusterOptions.env };
  return crawlOnCluster(seed, { ...clusterOptions, env }, async (web, cluster) => {
    const died: string[] = [];
    for (const s of cluster.services) s.process.once('exit', () => died.push(s.name));
    const cli = seedWithCli ? seedAndWait(cluster.control, web.seeds()) : undefined;
    if (!cli) await cluster.seed(web.seeds());
    const threshold = Math.round(web.expected.reachable.size / 3);
    const before = await waitFor(cluster, (s) => (s.totals.fetched ?? 0) >= threshold, 60_000, `${threshold} pages fetched`, 100);

    const downAt = Date.now();
    const linesAtDown = cluster.services.map((svc) => svc.output.length);
    await down();
    const whileDown: FaultOutcome['whileDown'] = {};
    const namesIt = (s: any) => typeof s?.waitingOn === 'string' && s.waitingOn.toLowerCase().includes(dependency);
    let statusWhileDown: any;
    const statusesWhileDown: FaultOutcome['statusesWhileDown'] = [];
    const needing = cluster.services.filter((svc) => readinessNeeds(svc.name, dependency));
    await Promise.all([
      (async () => {
        // The services that need it say so; then the others (the control plane among them) are read: still ready.
        await Promise.all(
          needing.map(async (svc) => (whileDown[svc.name] = await readinessUntil(svc.port, (r) => r.code === 503 && r.failing.includes(dependency), outageMs))),
        );
        const others = cluster.services.filter((svc) => !needing.includes(svc));
        await Promise.all(
          others.map(
            async (svc) => (whileDown[svc.name] = await readinessUntil(svc.port, (r) => svc.name !== 'control-plane' || r.failing.includes(dependency), outageMs)),
          ),
        );
      })(),
      (async () => {
        // Read throughout the outage. Under load the first write to fail may come late: an S3 outage is held
        // until it is named (or 3 s more).
        const until = downAt + outageMs + (dependency === 's3' ? 3000 : -500);
        while (Date.now() < until || (dependency === 's3' && !namesIt(statusWhileDown) && Date.now() < until + 3000)) {
          const started = Date.now();
          const status = await statusOrUndefined(cluster, 5000);
          statusesWhileDown.push({ ms: status ? Date.now() - started : null, status });
          if (!namesIt(statusWhileDown)) statusWhileDown = status ?? statusWhileDown;
          await new Promise((r) => setTimeout(r, 250));
        }
      })(),
    ]);
    await new Promise((r) => setTimeout(r, Math.max(0, downAt + outageMs - Date.now())));
    const linesWhileDown = Object.fromEntries(cluster.services.map((svc, i) => [svc.name, svc.output.length - linesAtDown[i]]));
    const upAt = Date.now();
    await up();

    // Work that failed for good during the outage is sent round again.
    const { status, replayed, afterReplay } = await settleAndReplayFailed(cluster, 120_000);
    const after: FaultOutcome['after'] = {};
    await Promise.all(cluster.services.map(async (s) => (after[s.name] = await readinessUntil(s.port, (r) => r.code === 200, 15_000))));
    if (process.env.FAULT_DEBUG)
      for (const s of cluster.services)
        process.stderr.write(
          `--- ${s.name}\n${s.output
            .filter((l) => /job-failed|"level":[456]0|Unhandled/i.test(l))
            .slice(-15)
            .map((l) => `${l.slice(0, 400)}\n`)
            .join('')}`,
        );
    const notJson = cluster.services.flatMap((svc) => svc.output.filter((line) => !isJsonObject(line)).map((line) => `${svc.name}: ${line.slice(0, 300)}`));
    const store = await MinioContentStore.connect({ url: cluster.s3Url, bucket: cluster.prefix });
    const stored = await storedPages(store);
    return {
      prefix: cluster.prefix,
      figures: crawlFigures(web),
      status,
      fetchedAtFault: before.totals.fetched,
      whileDown,
      after,
      died: [...died],
      storedPages: stored.size,
      storedUrls: [...stored.keys()],
      expectedStored: expectedStoredPages(web),
      stagingLeft: (await collectKeys(store.list('staging/'))).length,
      replayed,
      afterReplay,
      statusWhileDown,
      statusesWhileDown,
      downAt,
      upAt,
      notJson,
      linesWhileDown,
      cli: await cli,
      webRequests: webRequests(web),
    };
  });
}

function isJsonObject(line: string): boolean {
  try {
    const parsed = JSON.parse(line);
    return typeof parsed === 'object' && parsed !== null;
  } catch {
    return false;
  }
}

function webRequests(web: TestWeb): FaultOutcome['webRequests'] {
  const pages = web.requests.filter((r) => !r.path.startsWith('/robots.txt'));
  return { pages: pages.length, pages2xx: pages.filter((r) => r.status >= 200 && r.status < 300).length };
}

export function expectRecovered(o: FaultOutcome, dependency: string) {
  // Every service stayed up; those that need the dependency said they were unavailable because of it, the
  // others stayed ready, and the control plane (ready, degraded) named it. All are ready again.
  expect(o.died).toEqual([]);
  // Every line each service wrote is one JSON object: no raw error dump of a lost connection.
  expect(o.notJson).toEqual([]);
  for (const [service, r] of Object.entries(o.whileDown)) {
    const needs = readinessNeeds(service, dependency);
    const names = needs || service === 'control-plane';
    expect({ service, ...r, failing: r.failing.includes(dependency) }).toEqual({ service, code: needs ? 503 : 200, failing: names });
  }
  for (const [service, r] of Object.entries(o.after)) expect({ service, code: r.code }).toEqual({ service, code: 200 });
  // The crawl settled with every reachable allowed page fetched, nothing disallowed, nothing stuck. It is
  // called complete only if nothing failed.
  expect(o.status.complete).toBe(leftovers(o.status).failed === 0);
  expect(o.figures.lostUrls).toEqual([]);
  expect(o.figures.disallowedFetched).toBe(0);
  expect(leftovers(o.status).active).toBe(0);
  // Every page stored once. A staged body may be left behind: a body write that reached S3 while the client
  // had already given up on it (the outage) is written again under a new key when the fetch is retried, and
  // the first copy is never claimed. Garbage, not loss; a few at most.
  expect(o.storedPages).toBe(o.expectedStored);
  expect(o.stagingLeft).toBeLessThanOrEqual(3);
  // Failed jobs: only the known harmless case (docs/reliability.md §4). A `parse` or `content-seen` job that
  // completed while Redis was down could not be recorded complete (its lock had expired with the restart),
  // so it is redelivered, finds its staged body already released by content-seen, and fails its retries.
  // Its page was stored and its links sent: the stored-page count above proves it.
  const failedElsewhere = Object.entries<any>(o.status.queues ?? {}).filter(([q, c]) => c.failed > 0 && q !== 'parse' && q !== 'content-seen');
  expect(failedElsewhere).toEqual([]);
  // Sent round again, they end well (the page was done: they find nothing left to do), and nothing is lost.
  expect(leftovers(o.afterReplay).failed).toBe(0);
  expect(o.afterReplay.complete).toBe(true);
  expect(o.fetchedAtFault).toBeLessThan(o.figures.expected);
}
