import { readdirSync, readFileSync } from 'node:fs';
import { sampleProcess } from '../process-sampler';

/**
 * CPU of the local PostgreSQL server over a run: every process named `postgres` (the postmaster, one backend
 * a connection, the WAL writer, the checkpointer…), summed from /proc. Backends have no fixed pid, so they
 * are found anew at each sample; one that ends between two samples loses its last tenth of a second (the
 * services' pools keep theirs open for the whole run). Whatever else uses the same server is counted too:
 * measure on a quiet one.
 */
export class PostgresMeter {
  private readonly before = postgresCpu();
  private readonly last = new Map<number, number>(this.before);
  private readonly timer = setInterval(() => this.sample(), 100);

  /** CPU ms the server used since the meter started. */
  stop(): number {
    clearInterval(this.timer);
    this.sample();
    let ms = 0;
    for (const [pid, cpuMs] of this.last) ms += cpuMs - (this.before.get(pid) ?? 0);
    return ms;
  }

  private sample(): void {
    for (const [pid, cpuMs] of postgresCpu()) this.last.set(pid, Math.max(cpuMs, this.last.get(pid) ?? 0));
  }
}

/** CPU ms of each live `postgres` process. */
function postgresCpu(): Map<number, number> {
  const cpu = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (commOf(pid) !== 'postgres') continue;
    const sample = sampleProcess(pid);
    if (sample) cpu.set(pid, sample.cpuMs);
  }
  return cpu;
}

function commOf(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return null;
  }
}
