import type { ChildProcess } from 'node:child_process';
import { ProcessSampler, sampleProcess } from '../process-sampler';
import type { CrawlRun, ProcessFigures } from '../report/results';
import type { BenchWebProcess } from '../web/bench-web-process';

/** A process the run watches: the crawler's own (counted) or infrastructure (reported apart). */
export interface Watched {
  name: string;
  pid: () => number | undefined;
  infrastructure?: boolean;
}

/**
 * Samples CPU and peak RSS of the watched processes from /proc while a run lasts, and turns them, the
 * run's duration and what the web saw into a CrawlRun.
 */
export class RunMeter {
  private readonly sampler: ProcessSampler;
  private readonly started = performance.now();

  /** CPU each process had used before the run (Redis, a reused server): subtracted from its figure. */
  private readonly baseline = new Map<number, number>();

  constructor(private readonly watched: Watched[]) {
    for (const w of watched) {
      const pid = w.pid();
      const before = pid === undefined ? null : sampleProcess(pid);
      if (before) this.baseline.set(pid!, before.cpuMs);
    }
    this.sampler = new ProcessSampler(() => watched.map((w) => w.pid()).filter((p): p is number => p !== undefined));
  }

  /** Seconds since the meter started. */
  elapsed(): number {
    return (performance.now() - this.started) / 1000;
  }

  async finish(web: BenchWebProcess, run: Pick<CrawlRun, 'id' | 'label' | 'settings' | 'complete'> & { seconds?: number; notes?: string[] }): Promise<CrawlRun> {
    const seconds = run.seconds ?? this.elapsed();
    this.sampler.sample();
    const usage = this.sampler.stop();
    const figures = (infrastructure: boolean): ProcessFigures[] =>
      this.watched
        .filter((w) => !!w.infrastructure === infrastructure)
        .map((w) => {
          const pid = w.pid() ?? -1;
          const s = usage.perProcess.get(pid);
          return { name: w.name, cpuMs: (s?.cpuMs ?? 0) - (this.baseline.get(pid) ?? 0), peakRssBytes: s?.peakRssBytes ?? 0 };
        });
    const processes = figures(false);
    const infrastructure = figures(true);
    const observation = await web.observe(true);
    const cpuMs = processes.reduce((n, p) => n + p.cpuMs, 0);
    return {
      id: run.id,
      label: run.label,
      settings: run.settings,
      pages: observation.pages,
      seconds,
      pagesPerSecond: observation.pages / seconds,
      cpuMs,
      cpuMsPerPage: observation.pages ? cpuMs / observation.pages : 0,
      processes,
      peakRssBytes: processes.reduce((n, p) => n + p.peakRssBytes, 0),
      ...(infrastructure.length ? { infrastructure } : {}),
      web: observation,
      complete: run.complete,
      ...(run.notes ? { notes: run.notes } : {}),
    };
  }
}

/** Resolves with the exit code (or -1 for a signal); rejects on nothing. */
export function exited(child: ChildProcess): Promise<number> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code ?? -1)));
}
