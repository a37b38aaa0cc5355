import { Inject, Injectable } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { STATE_STORE, StateStore } from '@crawler/state';

/** The floor under every host's delay, as the frontier enforces it. */
export interface FloorRule {
  /** FRONTIER_MIN_DELAY_MS. */
  minDelayMs: number;
  /** FRONTIER_ALLOW_DELAY_BELOW_MIN: an operator's override may go under the floor. */
  allowDelayBelowMin: boolean;
}

/**
 * The politeness floor in force: the frontier's settings, which it publishes in the state store (namespace
 * `control`, key `politeness-floor`) as it starts. The control plane reports overrides by it, not by its own
 * settings, which may differ: a control plane allowed to set 100 ms in front of a frontier that holds its
 * 1000 ms floor must say 1000 ms. Until a frontier has published, this process's own settings stand in.
 */
@Injectable()
export class PolitenessFloor {
  static readonly NAMESPACE = 'control';
  static readonly KEY = 'politeness-floor';
  private readonly store: StateStore;
  private readonly own: FloorRule;

  constructor(@Inject(STATE_STORE) state: StateStore, @Inject(CRAWLER_CONFIG) config: CrawlerConfig) {
    this.store = state.namespace(PolitenessFloor.NAMESPACE);
    this.own = { minDelayMs: config.frontier.minDelayMs, allowDelayBelowMin: config.frontier.allowDelayBelowMin };
  }

  /** The frontier's part: its settings become the rule every reader reports by. */
  publish(): Promise<void> {
    return this.store.set(PolitenessFloor.KEY, JSON.stringify(this.own));
  }

  async rule(): Promise<FloorRule> {
    const raw = await this.store.get(PolitenessFloor.KEY);
    if (raw === null) return this.own;
    try {
      const { minDelayMs, allowDelayBelowMin } = JSON.parse(raw) as Partial<FloorRule>;
      if (typeof minDelayMs === 'number' && typeof allowDelayBelowMin === 'boolean') return { minDelayMs, allowDelayBelowMin };
    } catch {
      // Falls through: an unreadable entry is no rule.
    }
    return this.own;
  }
}

/**
 * The delay an operator's override puts in force under `rule`: the override where the floor lets it (at or
 * above it, or below where allowed), else the floor, as the frontier's politeDelay applies it.
 */
export function overrideInForce(overrideMs: number, rule: FloorRule): number {
  return rule.allowDelayBelowMin ? overrideMs : Math.max(overrideMs, rule.minDelayMs);
}
