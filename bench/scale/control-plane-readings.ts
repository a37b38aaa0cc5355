import type { EndpointTimings } from './scale-sample';

/** How long one endpoint may take before it counts as failed. */
const ENDPOINT_TIMEOUT_MS = 30_000;

/**
 * The control plane's response time for what an operator asks of a large crawl: the status (the dashboard's
 * whole picture), the frontier's figures, the first page of the hosts list, one host, one URL's record, the URLs given up on, the dead letters and
 * the failed messages. Timed one after the other, the body read to its end; any answer below 500 counts
 * (a URL not yet fetched answers 404).
 */
export async function timeControlPlane(base: string, host: string, url: string): Promise<EndpointTimings> {
  const paths: Record<string, string> = {
    status: '/status',
    frontier: '/frontier',
    hosts: '/hosts?limit=100',
    host: `/hosts/${encodeURIComponent(host)}`,
    url: `/urls?url=${encodeURIComponent(url)}`,
    'failed-urls': '/failed-urls',
    'dead-letters': '/dead-letters',
    failed: '/failed',
  };
  const timings: EndpointTimings = {};
  for (const [name, path] of Object.entries(paths)) {
    const started = performance.now();
    try {
      const response = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(ENDPOINT_TIMEOUT_MS) });
      await response.arrayBuffer();
      timings[name] = response.status < 500 ? Math.round(performance.now() - started) : null;
    } catch {
      timings[name] = null;
    }
  }
  return timings;
}

export interface FrontierGauges {
  queued: number | null;
  hosts: number | null;
  leases: number | null;
  /** crawler_frontier_dispatch_lateness_seconds: upper bound (s) → claims at most that late, cumulative since the process started. */
  lateness: [number, number][];
}

/** The frontier's figures from its Prometheus /metrics (crawler_frontier_urls{state="queued"}, _hosts, _leases, the dispatch lateness). */
export async function frontierGauges(metricsUrl: string): Promise<FrontierGauges> {
  try {
    const text = await (await fetch(metricsUrl, { signal: AbortSignal.timeout(ENDPOINT_TIMEOUT_MS) })).text();
    const gauge = (pattern: RegExp) => {
      const m = pattern.exec(text);
      return m ? Number(m[1]) : null;
    };
    return {
      queued: gauge(/^crawler_frontier_urls\{[^}]*state="queued"[^}]*\} (\S+)/m),
      hosts: gauge(/^crawler_frontier_hosts(?:\{[^}]*\})? (\S+)/m),
      leases: gauge(/^crawler_frontier_leases(?:\{[^}]*\})? (\S+)/m),
      lateness: [...text.matchAll(/^crawler_frontier_dispatch_lateness_seconds_bucket\{[^}]*le="([^"]+)"[^}]*\} (\S+)/gm)].map((m) => [
        m[1] === '+Inf' ? Infinity : Number(m[1]),
        Number(m[2]),
      ]),
    };
  } catch {
    return { queued: null, hosts: null, leases: null, lateness: [] };
  }
}

/**
 * A quantile of the claims between two readings of the lateness histogram (cumulative buckets), ms: the upper
 * bound of the bucket it falls in (null: no claim meanwhile, or a counter reset by a restart).
 */
export function latenessQuantile(before: [number, number][], after: [number, number][], q: number): number | null {
  const counts = after.map(([le, n]) => [le, n - (before.find(([b]) => b === le)?.[1] ?? 0)] as const);
  const total = counts[counts.length - 1]?.[1] ?? 0;
  if (total <= 0 || counts.some(([, n]) => n < 0)) return null;
  const bucket = counts.find(([, n]) => n >= q * total);
  return bucket ? (Number.isFinite(bucket[0]) ? bucket[0] * 1000 : Infinity) : null;
}
