import { appendFileSync } from 'node:fs';
import type { ScaleWebProcess } from '../web/scale-web-process';
import { frontierGauges, latenessQuantile, timeControlPlane } from './control-plane-readings';
import { ProcessReadings } from './process-readings';
import type { ScaleSample } from './scale-sample';
import { directoryBytes, postgresBytes, type RedisReadings } from './store-readings';

/** Where a shape's figures come from; what a shape does not have is left out. */
export interface SampleSources {
  /** The crawler's processes now (a process started again has a new pid). */
  processes(): { name: string; pid: number | undefined }[];
  redis?: RedisReadings;
  postgresUrl?: string;
  storeDir?: string;
  /** The frontier's /metrics URL. */
  frontierMetrics?(): string;
  /** The control plane's base URL. */
  controlPlane?(): string;
  /** A file each sample is appended to as one JSON line as it is taken: a run cut short keeps its curve. */
  journal?: string;
}

/** Takes a scale run's samples: the web's counts, every process, the stores, the frontier, the control plane. */
export class ScaleSampler {
  readonly samples: ScaleSample[] = [];
  private readonly readings: ProcessReadings;
  private readonly started = performance.now();
  private lateness: [number, number][] = [];

  constructor(
    private readonly web: ScaleWebProcess,
    private readonly sources: SampleSources,
    probeDir: string,
  ) {
    this.readings = new ProcessReadings(probeDir);
  }

  seconds(): number {
    return (performance.now() - this.started) / 1000;
  }

  async sample(): Promise<ScaleSample> {
    const seconds = this.seconds();
    const web = await this.web.observe();
    const processes: ScaleSample['processes'] = {};
    for (const { name, pid } of this.sources.processes()) processes[name] = this.readings.read(pid);
    const s = this.sources;
    // The control plane is timed before the stores are read: the Redis scan queues thousands of commands on
    // every master and du walks the stored bodies, and an endpoint timed beside them would measure the sampler.
    const controlPlane = s.controlPlane ? await timeControlPlane(s.controlPlane(), hostOf(this.web.seeds()[0]), this.web.seeds()[0]) : undefined;
    const [redis, postgres, store, gauges] = await Promise.all([
      s.redis ? s.redis.read().catch(() => []) : Promise.resolve([]),
      s.postgresUrl ? postgresBytes(s.postgresUrl) : Promise.resolve(null),
      s.storeDir ? directoryBytes(s.storeDir) : Promise.resolve(null),
      s.frontierMetrics ? frontierGauges(s.frontierMetrics()) : Promise.resolve(null),
    ]);
    const before = this.samples[this.samples.length - 1];
    const lateness = gauges?.lateness ?? [];
    const [p50, p99] = [0.5, 0.99].map((q) => latenessQuantile(this.lateness, lateness, q));
    this.lateness = lateness;
    const sample: ScaleSample = {
      seconds: round(seconds),
      pagesFetched: web.pagesFetched,
      pagesPerSecond: before && seconds > before.seconds ? round((web.pagesFetched - before.pagesFetched) / (seconds - before.seconds)) : 0,
      requests: web.requests,
      processes,
      redis,
      postgresBytes: postgres,
      storeBytes: store,
      frontierQueued: gauges?.queued ?? null,
      frontierHosts: gauges?.hosts ?? null,
      frontierLeases: gauges?.leases ?? null,
      dispatchP50Ms: p50,
      dispatchP99Ms: p99,
      ...(controlPlane ? { controlPlane } : {}),
    };
    this.samples.push(sample);
    if (s.journal) appendFileSync(s.journal, `${JSON.stringify(sample)}\n`);
    return sample;
  }
}

/** One line a sample, for the run's log. */
export function describeSample(s: ScaleSample, reachable: number): string {
  const mib = (b: number) => (b / 2 ** 20).toFixed(0);
  const rss = Object.entries(s.processes)
    .map(([name, p]) => `${name} ${mib(p.rssBytes)}`)
    .join(', ');
  const lasting = s.redis.reduce((n, m) => n + m.lastingBytes, 0);
  const slow = s.controlPlane ? Math.max(0, ...Object.values(s.controlPlane).map((ms) => ms ?? Infinity)) : undefined;
  return (
    `${s.seconds.toFixed(0)} s: ${s.pagesFetched} pages (${((100 * s.pagesFetched) / reachable).toFixed(1)}%), ${s.pagesPerSecond.toFixed(1)} pages/s; RSS MiB ${rss}` +
    (s.redis.length ? `; Redis lasting ${mib(lasting)} MiB` : '') +
    (s.frontierQueued !== null ? `; frontier ${s.frontierQueued} queued, ${s.frontierHosts} hosts` : '') +
    (s.dispatchP99Ms !== null ? `; dispatch late p50 ${s.dispatchP50Ms} ms, p99 ${s.dispatchP99Ms} ms` : '') +
    (slow !== undefined ? `; slowest control-plane endpoint ${slow} ms` : '')
  );
}

function hostOf(url: string): string {
  return new URL(url).hostname;
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
