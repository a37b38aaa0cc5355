import { performance } from 'node:perf_hooks';

/**
 * Keeps in-process jobs from holding the event loop. A job handed over by a promise starts in a microtask,
 * and microtasks run until none is left: with a backlog, a chain of jobs that each queue the next would
 * run thousands of handlers in one turn of the loop while sockets, timers and the control plane wait (a
 * million-page embedded crawl saw turns of a second). After `sliceMs` of one turn, the next job waits for
 * the loop's check phase, so I/O and timers run between slices.
 */
export class EventLoopSlice {
  /** When the current turn's slice began, or -1 when no job has run since the last check phase. */
  private startedAt = -1;

  constructor(private readonly sliceMs = 10) {}

  /** Resolves when a job may start: at once within the slice, else at the next turn's slice. */
  async next(): Promise<void> {
    while (!this.admits()) await new Promise<void>((resolve) => setImmediate(resolve));
  }

  private admits(): boolean {
    const now = performance.now();
    if (this.startedAt < 0) {
      this.startedAt = now;
      // Queued before any job that has to wait, so the slice ends first and the woken jobs start a new one.
      setImmediate(() => {
        this.startedAt = -1;
      });
      return true;
    }
    return now - this.startedAt < this.sliceMs;
  }
}
