import { Inject, Injectable } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { DependencyOutage, DependencyWatch } from '@crawler/runtime';
import { CrawlControlService, CrawlStatus } from './crawl-control.service';

/** What GET /status answers: the crawl's status, how fresh it is, and what is down since when. */
export interface LiveCrawlStatus extends CrawlStatus {
  /**
   * The figures are the last reading kept, not a fresh one: a fresh reading took longer than
   * CONTROL_PLANE_STATUS_TIMEOUT_MS (Redis away or slow) or failed. Nothing is concluded from them
   * (`complete` stays as it was read).
   */
  stale: boolean;
  /** How old the figures are, in ms (`at` is when they were read; 0 when fresh). */
  ageMs: number;
  /** Why there is no fresh reading (null when fresh). */
  readError: string | null;
  /** The stores the control plane finds down (its DependencyWatch), each since its first failed check. */
  outages: DependencyOutage[];
}

/**
 * GET /status within a bound: a fresh reading of the crawl when one comes within
 * CONTROL_PLANE_STATUS_TIMEOUT_MS, else at once the last one read (marked stale, with its age) and what is
 * down since when. One reading at a time: while Redis is away a reading waits for it, and callers meanwhile
 * share it instead of piling up more; one that completes after its callers gave up still refreshes the
 * figures kept.
 */
@Injectable()
export class LiveStatus {
  private last: CrawlStatus | null = null;
  private reading?: Promise<CrawlStatus>;

  constructor(
    private readonly control: CrawlControlService,
    private readonly watch: DependencyWatch,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
  ) {}

  async current(): Promise<LiveCrawlStatus> {
    const timeoutMs = this.config.controlPlane.statusTimeoutMs;
    let readError: string | null = null;
    let fresh: CrawlStatus | null = null;
    let timer: NodeJS.Timeout | undefined;
    try {
      fresh = await Promise.race([
        this.read(),
        new Promise<null>((resolve) => {
          timer = setTimeout(() => resolve(null), timeoutMs);
        }),
      ]);
      if (!fresh) readError = `no fresh reading within ${timeoutMs} ms (CONTROL_PLANE_STATUS_TIMEOUT_MS)`;
    } catch (error) {
      readError = (error as Error)?.message || String(error);
    } finally {
      clearTimeout(timer);
    }
    const outages = this.watch.outages();
    const status = fresh ?? this.last ?? unknownStatus();
    const now = Date.now();
    const down = outages.map((o) => `${o.dependency} unavailable since ${o.since} (${o.error})`);
    return {
      ...status,
      waitingOn: [...down, status.waitingOn].filter(Boolean).join('; ') || null,
      stale: !fresh,
      ageMs: fresh ? 0 : Math.max(0, now - Date.parse(status.at)),
      readError,
      outages,
    };
  }

  private read(): Promise<CrawlStatus> {
    if (!this.reading) {
      const reading = this.control.status();
      this.reading = reading;
      void reading
        .then(
          (status) => (this.last = status),
          () => undefined,
        )
        .finally(() => (this.reading = undefined));
    }
    return this.reading;
  }
}

/** Before any reading succeeded: nothing known, nothing concluded. `at` is the epoch, so `ageMs` says how little is known. */
function unknownStatus(): CrawlStatus {
  return {
    complete: false,
    failed: {},
    outageRetries: {},
    waitingOn: null,
    redisMemory: null,
    pending: 0,
    frontier: 0,
    queues: {},
    totals: {},
    paused: false,
    pause: { paused: false, since: null, reason: null },
    inFlight: 0,
    drained: false,
    downloaders: 0,
    stages: [],
    rates: {},
    topHosts: [],
    belowFloor: [],
    recentErrors: [],
    robotsWaiting: { count: 0, hosts: [] },
    waitingOnly: null,
    hostsSetAside: [],
    at: new Date(0).toISOString(),
  };
}
