import { Inject, Injectable } from '@nestjs/common';
import { STATE_STORE, StateStore } from '@crawler/state';

export interface PauseState {
  paused: boolean;
  /** When the crawl was paused (ISO time), null while running. */
  since: string | null;
  /** Why, as the operator said (free text), null when not given. */
  reason: string | null;
}

/**
 * The crawl-wide pause switch, shared by every process through the state store (namespace `control`, key
 * `paused`). The control plane flips it; every frontier dispatcher reads it before each claim and hands out
 * no URL while it is set. Nothing else stops: work already dispatched finishes, and new URLs keep arriving
 * in the frontier's queues, so a pause loses nothing and a resume picks up where the crawl was.
 */
@Injectable()
export class PauseSwitch {
  static readonly NAMESPACE = 'control';
  static readonly KEY = 'paused';
  private readonly store: StateStore;

  constructor(@Inject(STATE_STORE) state: StateStore) {
    this.store = state.namespace(PauseSwitch.NAMESPACE);
  }

  /** Sets the switch. Pausing a paused crawl keeps its original time and reason. */
  async pause(reason?: string): Promise<PauseState> {
    const current = await this.state();
    if (current.paused) return current;
    const state: PauseState = { paused: true, since: new Date().toISOString(), reason: reason?.trim() || null };
    await this.store.set(PauseSwitch.KEY, JSON.stringify({ since: state.since, reason: state.reason }));
    return state;
  }

  async resume(): Promise<PauseState> {
    await this.store.del(PauseSwitch.KEY);
    return { paused: false, since: null, reason: null };
  }

  async isPaused(): Promise<boolean> {
    return (await this.store.get(PauseSwitch.KEY)) !== null;
  }

  async state(): Promise<PauseState> {
    const raw = await this.store.get(PauseSwitch.KEY);
    if (raw === null) return { paused: false, since: null, reason: null };
    try {
      const { since, reason } = JSON.parse(raw) as { since?: string; reason?: string | null };
      return { paused: true, since: since ?? null, reason: reason ?? null };
    } catch {
      // Set by hand (`SET <prefix>:control:paused 1`): still a pause.
      return { paused: true, since: null, reason: null };
    }
  }
}
