import { Inject, Injectable } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { FRONTIER_STORE, FrontierStore, HostControls } from '@crawler/frontier-store';
import { STATE_STORE, StateStore } from '@crawler/state';

/** A delay override under the crawl-wide minimum, while FRONTIER_ALLOW_DELAY_BELOW_MIN is off. */
export class BelowFloorError extends Error {
  constructor(
    readonly delayMs: number,
    readonly minDelayMs: number,
  ) {
    super(
      `delayMs: ${delayMs} ms is below the crawl-wide minimum of ${minDelayMs} ms (FRONTIER_MIN_DELAY_MS); ` +
        "an override may only raise a host's delay unless FRONTIER_ALLOW_DELAY_BELOW_MIN=true",
    );
  }
}

export interface BelowFloorHost {
  host: string;
  /** The operator's delay in force, ms. */
  delayMs: number;
  /** The crawl-wide minimum it goes under (FRONTIER_MIN_DELAY_MS). */
  minDelayMs: number;
}

/**
 * The operator's per-host controls (PATCH /hosts/:host, DELETE /hosts/:host/queue). Each one is written to
 * the host's politeness audit, so a site owner's complaint can be answered with who slowed, sped up or
 * blocked the host, and when. A delay under the crawl-wide minimum is refused unless allowed, and an allowed
 * one is remembered (state namespace `control`, set `below-floor`) so the status can list every host that
 * runs faster than the floor.
 */
@Injectable()
export class HostOverrides {
  static readonly NAMESPACE = 'control';
  static readonly BELOW_FLOOR = 'below-floor';
  private readonly state: StateStore;

  constructor(
    @Inject(FRONTIER_STORE) private readonly frontier: FrontierStore,
    @Inject(STATE_STORE) state: StateStore,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
  ) {
    this.state = state.namespace(HostOverrides.NAMESPACE);
  }

  async set(host: string, controls: HostControls, now: number): Promise<void> {
    const { minDelayMs, allowDelayBelowMin } = this.config.frontier;
    const below = controls.delayMs != null && controls.delayMs < minDelayMs;
    if (below && !allowDelayBelowMin) throw new BelowFloorError(controls.delayMs!, minDelayMs);
    // Listed before the override takes effect, so the host is never below the floor unlisted.
    if (below) await this.state.setAdd(HostOverrides.BELOW_FLOOR, [host]);
    await this.frontier.setHostControls(host, controls, now);
    await this.frontier.audit(host, [JSON.stringify({ at: now, event: 'operator', ...controls, minDelayMs, ...(below ? { belowFloor: true } : {}) })]);
    if (controls.delayMs !== undefined && !below) await this.state.setRemove(HostOverrides.BELOW_FLOOR, host);
  }

  async purge(host: string, now: number): Promise<number> {
    const dropped = await this.frontier.purgeHost(host, now);
    await this.frontier.audit(host, [JSON.stringify({ at: now, event: 'operator-purge', dropped })]);
    return dropped;
  }

  /** Hosts whose override is under the floor now (an override changed since is left out). */
  async belowFloor(): Promise<BelowFloorHost[]> {
    const minDelayMs = this.config.frontier.minDelayMs;
    const hosts = await this.state.setMembers(HostOverrides.BELOW_FLOOR);
    const infos = await Promise.all(hosts.sort().map((host) => this.frontier.hostInfo(host)));
    return infos.filter((i) => i.delayMs != null && i.delayMs < minDelayMs).map((i) => ({ host: i.host, delayMs: i.delayMs!, minDelayMs }));
  }
}
