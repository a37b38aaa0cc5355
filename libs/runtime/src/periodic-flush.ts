/**
 * A write of what a service gathered in memory, run every `everyMs` and whenever asked, never two at once:
 * each flush starts once the one before it has ended, failed or not. The timer is unref'd, so it never keeps
 * a process alive; a timed flush that fails is left for the next one to retry (the service keeps what it
 * could not write), while a flush that was asked for rejects with the error.
 */
export class PeriodicFlush {
  private flushing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly write: () => Promise<void>,
    everyMs: number,
  ) {
    this.timer = setInterval(() => void this.flush().catch(() => undefined), everyMs);
    this.timer.unref();
  }

  /** Runs the write once the one under way has ended; resolves or rejects with this one. */
  flush(): Promise<void> {
    this.flushing = this.flushing.catch(() => undefined).then(() => this.write());
    return this.flushing;
  }

  /** Stops the timer and runs the last write. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
