import type { Readable } from 'node:stream';
import { FetchErrorCode, HttpFetchError } from './http-errors';

export interface MinimumRate {
  /** Bytes a second the body must average over each window; 0 = no minimum. */
  bytesPerSecond: number;
  windowMs: number;
}

/**
 * Cuts off a body that arrives slower than a minimum rate: the total timeout alone lets a server that
 * sends a byte a second hold a fetch (and its host's turn) for all of it. The rate is judged per window,
 * starting when the headers arrived, so a short body is never judged and a slow start is forgiven until
 * the first window ends. The readers count the bytes they take off the wire.
 */
export class TransferRateGuard {
  private bytes = 0;
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(body: Readable, rate: MinimumRate) {
    if (rate.bytesPerSecond <= 0) return;
    const needed = (rate.bytesPerSecond * rate.windowMs) / 1000;
    this.timer = setInterval(() => {
      if (this.bytes < needed) {
        this.stop();
        const measured = Math.round((this.bytes * 1000) / rate.windowMs);
        body.destroy(
          new HttpFetchError(`body arrived at ${measured} B/s over ${rate.windowMs} ms, under the minimum of ${rate.bytesPerSecond} B/s`, FetchErrorCode.TooSlow, {
            name: 'TimeoutError',
          }),
        );
      }
      this.bytes = 0;
    }, rate.windowMs);
    // The fetch's own end stops it; it must not keep a process alive on its own.
    this.timer.unref();
  }

  count(bytes: number) {
    this.bytes += bytes;
  }

  stop() {
    if (this.timer) clearInterval(this.timer);
  }
}
