import { Inject, Injectable } from '@nestjs/common';
import { Counter, Registry } from 'prom-client';
import { STATE_STORE, StateStore } from '@crawler/state';

/** Crawl totals shared by every process (a hash in the state store), mirrored as a Prometheus counter. */
@Injectable()
export class CrawlStats {
  private readonly store: StateStore;
  private readonly events: Counter<'event'>;

  constructor(@Inject(STATE_STORE) state: StateStore, registry: Registry) {
    this.store = state.namespace('stats');
    this.events = new Counter({
      name: 'crawler_events_total',
      help: 'Crawl events by kind (fetched, stored, duplicate, disallowed, filtered.<reason>, error.<kind>, …)',
      labelNames: ['event'],
      registers: [registry],
    });
  }

  async count(event: string, by = 1): Promise<void> {
    if (by === 0) return;
    this.events.inc({ event }, by);
    await this.store.hashIncr('totals', event, by);
  }

  async totals(): Promise<Record<string, number>> {
    const raw = await this.store.hashGetAll('totals');
    return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, Number(v)]));
  }
}
