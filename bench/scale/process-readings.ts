import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sampleProcess } from '../process-sampler';
import type { ProbeReading } from './process-probe';
import type { ProcessReading } from './scale-sample';

/**
 * Each crawler process's figures at a sample: RSS and CPU from /proc, heap and event-loop delay from the
 * probe preloaded into it (process-probe.ts). CPU is the difference from the reading before, so a process
 * started again (a new pid) starts its count anew.
 */
export class ProcessReadings {
  private readonly lastCpu = new Map<number, { cpuMs: number; at: number }>();

  constructor(private readonly probeDir: string) {}

  read(pid: number | undefined): ProcessReading {
    if (pid === undefined) return { rssBytes: 0, heapUsedBytes: null, cpuCores: 0, eventLoopP99Ms: null };
    const now = performance.now();
    const cpu = sampleProcess(pid)?.cpuMs ?? 0;
    const before = this.lastCpu.get(pid);
    this.lastCpu.set(pid, { cpuMs: cpu, at: now });
    const probe = readProbe(join(this.probeDir, `${pid}.json`));
    return {
      rssBytes: currentRss(pid),
      heapUsedBytes: probe?.heapUsedBytes ?? null,
      cpuCores: before && now > before.at ? round((cpu - before.cpuMs) / (now - before.at)) : 0,
      eventLoopP99Ms: probe ? round(probe.eventLoopP99Ms) : null,
    };
  }
}

function readProbe(file: string): ProbeReading | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as ProbeReading;
  } catch {
    return null;
  }
}

/** Current resident set (VmRSS), bytes; 0 once the process is gone. */
function currentRss(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The `--require` that loads the probe into a process (for NODE_OPTIONS). */
export function probeNodeOptions(): string {
  return `--require ${join(__dirname, 'process-probe.js')}`;
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
