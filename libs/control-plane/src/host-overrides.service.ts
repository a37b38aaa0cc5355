import { Inject, Injectable } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { overrideInForce, PolitenessFloor } from '@crawler/crawl-state';
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
  /** The crawl-wide minimum it goes under (the frontier's FRONTIER_MIN_DELAY_MS). */
  minDelayMs: number;
}

/**
 * The operator's per-host controls (PATCH /hosts/:host, DELETE /hosts/:host/queue). Each one is written to
 * the host's politeness audit, so a site owner's complaint can be answered with who slowed, sped up or
 * blocked the host, and when. A delay under the crawl-wide minimum is refused unless allowed, and an allowed
 * one is remembered (state namespace `control`, set `below-floor`) so the status can list every host that
 * runs faster than the floor. What is reported is what is in force: the frontier holds the floor under an
 * override it does not allow (PolitenessFloor), whatever this process allowed.
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
    private readonly floor: PolitenessFloor,
  ) {
    this.state = state.namespace(HostOverrides.NAMESPACE);
  }

  /** Sets the host's controls; answers the delay put in force, when the override sets one (the floor's, when it holds). */
  async set(host: string, controls: HostControls, now: number): Promise<{ delayInForceMs?: number; heldToFloor?: true }> {
    const { minDelayMs, allowDelayBelowMin } = this.config.frontier;
    const below = controls.delayMs != null && controls.delayMs < minDelayMs;
    if (below && !allowDelayBelowMin) throw new BelowFloorError(controls.delayMs!, minDelayMs);
    const rule = await this.floor.rule();
    const inForceMs = controls.delayMs == null ? undefined : overrideInForce(controls.delayMs, rule);
    const belowInForce = inForceMs !== undefined && inForceMs < rule.minDelayMs;
    // Listed before the override takes effect, so the host is never below the floor unlisted.
    if (belowInForce) await this.state.setAdd(HostOverrides.BELOW_FLOOR, [host]);
    await this.frontier.setHostControls(host, controls, now);
    const entry = {
      at: now,
      event: 'operator',
      ...controls,
      // The delay the frontier applies, and the floor it holds (its own, not this process's).
      ...(inForceMs === undefined ? {} : { delayInForceMs: inForceMs }),
      minDelayMs: rule.minDelayMs,
      ...(belowInForce ? { belowFloor: true } : {}),
      ...(inForceMs !== undefined && inForceMs !== controls.delayMs ? { heldToFloor: true as const } : {}),
    };
    await this.frontier.audit(host, [JSON.stringify(entry)]);
    if (controls.delayMs !== undefined && !belowInForce) await this.state.setRemove(HostOverrides.BELOW_FLOOR, host);
    return inForceMs === undefined ? {} : { delayInForceMs: inForceMs, ...(entry.heldToFloor ? { heldToFloor: true } : {}) };
  }

  async purge(host: string, now: number): Promise<number> {
    const dropped = await this.frontier.purgeHost(host, now);
    await this.frontier.audit(host, [JSON.stringify({ at: now, event: 'operator-purge', dropped })]);
    return dropped;
  }

  /** Hosts whose override holds them under the floor now, as the frontier applies it (an override changed since is left out). */
  async belowFloor(): Promise<BelowFloorHost[]> {
    const rule = await this.floor.rule();
    const hosts = await this.state.setMembers(HostOverrides.BELOW_FLOOR);
    const infos = await Promise.all(hosts.sort().map((host) => this.frontier.hostInfo(host)));
    return infos.flatMap((i) => {
      const delayMs = i.delayMs == null ? undefined : overrideInForce(i.delayMs, rule);
      return delayMs !== undefined && delayMs < rule.minDelayMs ? [{ host: i.host, delayMs, minDelayMs: rule.minDelayMs }] : [];
    });
  }

  /** The delay an operator's override puts in force for a host, and whether the floor holds it instead. */
  async inForce(overrideMs: number): Promise<{ delayMs: number; heldToFloor: boolean }> {
    const delayMs = overrideInForce(overrideMs, await this.floor.rule());
    return { delayMs, heldToFloor: delayMs !== overrideMs };
  }
}
