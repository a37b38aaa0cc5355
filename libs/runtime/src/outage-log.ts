import type { Logger } from '@crawler/logging';

interface OpenOutage {
  since: number;
  lastLoggedAt: number;
  /** Failures reported since the last line, not logged one by one. */
  held: number;
}

/**
 * Logs an outage as an operator wants to read it: one line when it starts, one reminder at most every
 * `reminderMs` while it lasts (saying how many failures were held back), one line when it ends (with how
 * long it lasted). Failures of one outage reported a thousand times a minute (every reconnect attempt,
 * every job) are never logged one by one. Keys are what is down (`redis`, `s3`, `outage-retry:parse`…).
 */
export class OutageLog {
  private readonly open = new Map<string, OpenOutage>();

  constructor(
    private readonly logger: Logger,
    private readonly reminderMs: number,
  ) {}

  /** When `key` went down (ms since the epoch), or undefined while it is up. */
  since(key: string): number | undefined {
    return this.open.get(key)?.since;
  }

  /**
   * One more failure of `key` (`at`: when the failed call was made, if not now): logged if it starts an
   * outage, or if the last reminder is old enough.
   */
  down(key: string, fields: Record<string, unknown>, message: string, at = Date.now()): void {
    const now = Date.now();
    const outage = this.open.get(key);
    if (!outage) {
      this.open.set(key, { since: at, lastLoggedAt: now, held: 0 });
      this.logger.warn({ event: 'outage-start', outage: key, ...fields }, message);
      return;
    }
    outage.held++;
    if (now - outage.lastLoggedAt < this.reminderMs) return;
    this.logger.warn(
      { event: 'outage-continues', outage: key, since: new Date(outage.since).toISOString(), failuresSinceLastLine: outage.held, ...fields },
      `${message} (still, since ${new Date(outage.since).toISOString()})`,
    );
    outage.lastLoggedAt = now;
    outage.held = 0;
  }

  /** `key` works again: logged if it was down. */
  up(key: string, fields: Record<string, unknown>, message: string): void {
    const outage = this.open.get(key);
    if (!outage) return;
    this.open.delete(key);
    this.logger.info({ event: 'outage-end', outage: key, since: new Date(outage.since).toISOString(), durationMs: Date.now() - outage.since, ...fields }, message);
  }

  /** Everything that was down works again (a job went through): each open outage is logged as ended. */
  allUp(fields: Record<string, unknown>, message: (key: string) => string): void {
    for (const key of [...this.open.keys()]) this.up(key, fields, message(key));
  }
}
