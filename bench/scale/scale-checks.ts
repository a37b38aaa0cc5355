import type { ScaleSample, ShapeRun } from './scale-sample';

/** One target of the scale run, checked. */
export interface ScaleCheck {
  shape: string;
  name: string;
  pass: boolean;
  /** What was measured, and against what. */
  detail: string;
}

/** Redis bytes a fetched page may cost in keys that do not expire (docs/estimates.md, "Redis memory per page"). */
const REDIS_BYTES_PER_PAGE = 80;
/** The slowest the control plane may answer any of the endpoints timed. */
const CONTROL_PLANE_MS = 500;
/** RSS at the end over RSS at 20%, at most. */
const RSS_GROWTH = 1.2;
/** Requests/s over the last tenth of the crawl's requests over requests/s from 10% to 20% of them, at least. */
const PACE_KEPT = 0.9;
export const PACE_CHECK = 'pace kept: requests/s over the last tenth of the requests ≥ 0.9 × requests/s from 10% to 20%';

/**
 * The targets of a scale run of one shape: pace kept, memory flat, Redis per page within budget, nothing
 * lost, nothing fetched twice beyond what was in flight at a kill, robots.txt and politeness kept (all
 * counted by the web), the control plane quick.
 */
export function scaleChecks(run: ShapeRun, limits: { perHostLimit: number; perIpLimit: number; perSharedAddress: number; delayMs: number }): ScaleCheck[] {
  const checks: ScaleCheck[] = [];
  const check = (name: string, pass: boolean, detail: string) => checks.push({ shape: run.shape, name, pass, detail });
  const w = run.web;
  const reachable = w.reachablePages;
  const samples = run.samples;

  check(
    'complete',
    run.complete,
    run.complete ? `${w.pagesFetched} of ${reachable} pages in ${run.seconds.toFixed(0)} s` : `${w.pagesFetched} of ${reachable} pages; ${run.notes.join('; ')}`,
  );

  // Pace is judged on requests, the crawler's unit of work: late in a crawl most requests go to the web's
  // other URLs (duplicates, redirects, missing and failing pages, found and queued behind the pages), so pages/s
  // falls there while the crawler works as fast as ever. Pages/s is shown beside it.
  const totalRequests = samples[samples.length - 1]?.requests ?? 0;
  const requests = (s: ScaleSample) => s.requests;
  const early = rateBetween(samples, 0.1 * totalRequests, 0.2 * totalRequests, requests);
  const late = rateBetween(samples, 0.9 * totalRequests, totalRequests, requests);
  const pagesEarly = rateBetween(samples, 0.1 * reachable, 0.2 * reachable);
  const pagesLate = rateBetween(samples, 0.9 * reachable, reachable);
  check(
    PACE_CHECK,
    early !== null && late !== null && late >= PACE_KEPT * early,
    `${fmt(late)} vs ${fmt(early)} requests/s; pages/s ${fmt(pagesLate)} over the last tenth of the pages vs ${fmt(pagesEarly)} from 10% to 20%${run.resume ? ' (the kill falls in between)' : ''}`,
  );

  // After a kill the processes start afresh: their growth is judged from 10% of the pages past the kill.
  const baseShare = run.resume ? Math.max(0.2, run.resume.killedAt + 0.1) : 0.2;
  const base = samples.find((s) => s.pagesFetched >= baseShare * reachable);
  for (const name of Object.keys(samples[0]?.processes ?? {})) {
    const end = [...samples].reverse().find((s) => (s.processes[name]?.rssBytes ?? 0) > 0);
    const rss = (s: ScaleSample | undefined) => s?.processes[name]?.rssBytes ?? 0;
    const at20 = rss(base);
    const atEnd = rss(end);
    // The end alone can flatter a crawl that frees its queues as it drains: the peak in between is shown too.
    const peak = samples.filter((s) => base && s.seconds >= base.seconds).reduce((top, s) => (rss(s) > rss(top) ? s : top), base);
    check(
      `${name}: RSS at the end ≤ ${RSS_GROWTH} × RSS at ${Math.round(baseShare * 100)}%`,
      at20 > 0 && atEnd <= RSS_GROWTH * at20,
      `${mib(atEnd)} MiB at ${end ? Math.round((100 * end.pagesFetched) / reachable) : '?'}% vs ${mib(at20)} MiB; peak in between ${mib(rss(peak))} MiB at ${peak?.seconds.toFixed(0)} s (${at20 > 0 ? (rss(peak) / at20).toFixed(2) : '—'} ×)`,
    );
  }

  const last = samples[samples.length - 1];
  if (last?.redis.length) {
    const lasting = last.redis.reduce((n, m) => n + m.lastingBytes, 0);
    const perPage = lasting / Math.max(1, last.pagesFetched);
    check(
      `Redis bytes per page in keys that do not expire ≤ ${REDIS_BYTES_PER_PAGE}`,
      perPage <= REDIS_BYTES_PER_PAGE,
      `${perPage.toFixed(1)} B (${mib(lasting)} MiB over ${last.pagesFetched} pages)`,
    );
  }

  check(
    'no lost URL: every reachable page requested',
    run.lost.count === 0,
    `${run.lost.count} never requested${run.lost.urls.length ? `, e.g. ${run.lost.urls.slice(0, 3).join(' ')}` : ''}`,
  );
  // At least once, by design: what was in flight at a kill, and leases the crawler itself handed out again.
  const allowed = (run.resume?.inFlightAtKill ?? 0) + run.reclaimed;
  check(
    'no repeat fetch beyond the leases in flight at a kill or handed out again',
    w.repeatRequests <= allowed,
    `${w.repeatRequests} repeats ${JSON.stringify(w.repeatsByKind)}; allowed ${allowed} (${run.resume?.inFlightAtKill ?? 0} in flight at a kill, ${run.reclaimed} leases expired or reclaimed)`,
  );
  check(
    'robots.txt obeyed: nothing disallowed fetched, robots.txt first',
    w.robotsViolations === 0 && w.beforeRobots === 0,
    `${w.robotsViolations} disallowed fetched, ${w.beforeRobots} before robots.txt`,
  );
  check(
    'politeness per host: in flight ≤ limit, request starts ≥ delay (Crawl-delay kept)',
    w.maxInFlightPerHost <= limits.perHostLimit && w.tooClose === 0 && (w.minCrawlDelayIntervalMs === null || w.minCrawlDelayIntervalMs >= 1000),
    `max ${w.maxInFlightPerHost} in flight (limit ${limits.perHostLimit}); ${w.tooClose} starts closer than the delay (${limits.delayMs} ms); shortest ${w.minIntervalMs} ms, ${w.minCrawlDelayIntervalMs} ms on Crawl-delay hosts`,
  );
  check(
    'politeness per address: in flight ≤ the per-IP limit (grown by the domains on a shared address)',
    w.maxInFlightPerSharedAddress <= limits.perSharedAddress && w.maxInFlightPerOwnAddress <= limits.perIpLimit,
    `max ${w.maxInFlightPerSharedAddress} on a shared address (limit ${limits.perSharedAddress}), ${w.maxInFlightPerOwnAddress} on an own one (limit ${limits.perIpLimit})`,
  );

  const slowest = slowestEndpoints(samples);
  if (Object.keys(slowest).length) {
    const over = Object.entries(slowest).filter(([, ms]) => ms === null || ms >= CONTROL_PLANE_MS);
    check(
      `control plane answers every endpoint in < ${CONTROL_PLANE_MS} ms`,
      over.length === 0,
      Object.entries(slowest)
        .map(([name, ms]) => `${name} ${ms === null ? 'failed' : `${ms} ms`}`)
        .join(', '),
    );
  }
  return checks;
}

/** Each endpoint's slowest answer over the samples (null if it ever failed). */
export function slowestEndpoints(samples: ScaleSample[]): Record<string, number | null> {
  const slowest: Record<string, number | null> = {};
  for (const s of samples) {
    for (const [name, ms] of Object.entries(s.controlPlane ?? {})) {
      if (ms === null || slowest[name] === null) slowest[name] = null;
      else slowest[name] = Math.max(slowest[name] ?? 0, ms);
    }
  }
  return slowest;
}

/** Count per second while `count` went from `from` to `to` (times interpolated between samples); pages by default. */
function rateBetween(samples: ScaleSample[], from: number, to: number, count: (s: ScaleSample) => number = (s) => s.pagesFetched): number | null {
  const a = timeAt(samples, from, count);
  const b = timeAt(samples, to, count);
  return a === null || b === null || b <= a ? null : (to - from) / (b - a);
}

/** When `count` reached `n`, seconds, by linear interpolation between the samples around it. */
function timeAt(samples: ScaleSample[], n: number, count: (s: ScaleSample) => number): number | null {
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i];
    if (count(s) < n) continue;
    if (i === 0) return s.seconds;
    const p = samples[i - 1];
    const span = count(s) - count(p);
    return span > 0 ? p.seconds + ((n - count(p)) / span) * (s.seconds - p.seconds) : s.seconds;
  }
  return null;
}

function fmt(n: number | null): string {
  return n === null ? '—' : n.toFixed(1);
}

function mib(bytes: number): string {
  return (bytes / 2 ** 20).toFixed(0);
}
