import type { HostWaiting } from '@crawler/crawl-state';
import type { FrontierService } from '@crawler/frontier';
import type { Logger } from '@crawler/logging';

/**
 * CRAWL_ROBOTS_IDLE_WAIT_MS: hosts waiting for an unreachable robots.txt may hold a crawl open for
 * DOWNLOADER_ROBOTS_UNREACHABLE_MAX_MS (30 minutes) when they are all it has left. Once that has been so
 * for `waitMs` without a break, they are given up (set aside), and the crawl ends naming them.
 */
export class RobotsIdleWait {
  /** Since when the completion probe has seen nothing but waiting hosts. */
  private since?: number;
  private givingUp = false;

  constructor(
    private readonly frontier: Pick<FrontierService, 'giveUpWaiting'>,
    private readonly waitMs: number,
    private readonly logger: Pick<Logger, 'warn' | 'error'>,
  ) {}

  /** "; given up at …" for the line that says what the crawl waits for; empty when the wait is not running. */
  describeGiveUp(): string {
    if (this.since === undefined) return '';
    return `; the crawl gives them up at ${new Date(this.since + this.waitMs).toISOString()} unless other work comes (CRAWL_ROBOTS_IDLE_WAIT_MS)`;
  }

  /** One reading of the probe: `waiting` is set while those hosts are the only work left. */
  tick(waiting: { hosts: HostWaiting[] } | undefined, now = Date.now()): void {
    if (!waiting || this.waitMs <= 0) {
      this.since = undefined;
      return;
    }
    this.since ??= now;
    if (now - this.since < this.waitMs || this.givingUp) return;
    this.givingUp = true;
    const waited = now - this.since;
    this.logger.warn(
      { event: 'robots-idle-give-up', hosts: waiting.hosts.map((h) => h.host), waitedMs: waited },
      'giving up hosts whose robots.txt is unreachable: nothing else is left',
    );
    this.frontier
      .giveUpWaiting(waiting.hosts, waited)
      .catch((error) => this.logger.error({ err: error }, 'could not give up the waiting hosts; they wait for their robots.txt as before'))
      .finally(() => {
        this.givingUp = false;
        this.since = undefined;
      });
  }
}
