import type { StateStore } from '@crawler/state';

/** The least wait before asking for a turn again. */
const RETRY_MS = 5;

/**
 * Turns at a host or an address, shared by every process that holds the same state store (every render
 * replica, through Redis): a turn is taken by writing, atomically and only when none is there, the key of
 * the host with the time the next turn may start, kept until then; whoever finds the key waits until that
 * time and tries again. So two replicas rendering pages of one site space their requests to it as one would.
 */
export class HostTurns {
  constructor(private readonly state: StateStore) {}

  /** Resolves when this process may send a request to `key`, `gapMs` after the last one any process sent there. */
  async take(key: string, gapMs: number, signal: AbortSignal): Promise<void> {
    // A turn of 1 ms at least: with no gap to keep, a turn still waits out a hold.
    const gap = Math.max(1, gapMs);
    for (;;) {
      signal.throwIfAborted();
      const next = Date.now() + gap;
      if (await this.state.setIfAbsent(key, String(next), gap)) return;
      const until = Number(await this.state.get(key));
      // A turn whose time has passed but whose key is still there (another machine's clock runs behind): soon again.
      await delay(Number.isFinite(until) ? Math.max(RETRY_MS, until - Date.now()) : RETRY_MS, signal);
    }
  }

  /** Pushes the next turn at `key` to `ms` from now, whoever holds it: a host that asked to be left alone (429, 503). */
  async hold(key: string, ms: number): Promise<void> {
    if (ms > 0) await this.state.set(key, String(Date.now() + ms), ms);
  }
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
