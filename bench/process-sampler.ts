import { readFileSync } from 'node:fs';

export interface ProcessSample {
  /** User + system CPU time, ms. */
  cpuMs: number;
  /** Peak resident set size, bytes (VmHWM). */
  peakRssBytes: number;
}

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** CPU time and peak RSS of a live process, from /proc (Linux). */
export function sampleProcess(pid: number): ProcessSample | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cpuMs = (Number(fields[11]) + Number(fields[12])) * TICK_MS;
    const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return { cpuMs, peakRssBytes: hwm ? Number(hwm[1]) * 1024 : 0 };
  } catch {
    return null;
  }
}

/** Keeps, per process, the largest CPU time and peak RSS seen until stopped. */
export class ProcessSampler {
  private readonly last = new Map<number, ProcessSample>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pids: () => number[],
    intervalMs = 100,
  ) {
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  sample() {
    for (const pid of this.pids()) {
      const s = sampleProcess(pid);
      if (!s) continue;
      // A process that has exited but not been reaped still has /proc/<pid>/stat but no VmHWM: keep maxima.
      const previous = this.last.get(pid);
      this.last.set(pid, {
        cpuMs: Math.max(s.cpuMs, previous?.cpuMs ?? 0),
        peakRssBytes: Math.max(s.peakRssBytes, previous?.peakRssBytes ?? 0),
      });
    }
  }

  stop(): { cpuMs: number; peakRssBytes: number; perProcess: Map<number, ProcessSample> } {
    clearInterval(this.timer);
    const all = [...this.last.values()];
    return {
      cpuMs: all.reduce((n, s) => n + s.cpuMs, 0),
      peakRssBytes: all.reduce((n, s) => n + s.peakRssBytes, 0),
      perProcess: this.last,
    };
  }
}
