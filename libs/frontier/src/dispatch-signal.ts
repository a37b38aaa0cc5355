import { Injectable } from '@nestjs/common';

/** Wakes the dispatcher early when this process adds URLs or completes leases (other replicas are seen on its next tick). */
@Injectable()
export class DispatchSignal {
  private waiters: (() => void)[] = [];

  wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Resolves after `ms`, or sooner when woken. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.max(0, ms));
      const self = this;
      function done() {
        clearTimeout(timer);
        self.waiters = self.waiters.filter((w) => w !== done);
        resolve();
      }
      this.waiters.push(done);
    });
  }
}
