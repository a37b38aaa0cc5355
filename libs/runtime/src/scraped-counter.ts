import { Counter, type CounterConfiguration, type LabelValues } from 'prom-client';

/** What one label set counted since the counter was last collected. */
export interface CounterCell {
  n: number;
}

/**
 * A Prometheus counter for hot paths: a caller adds to a cell (a plain number, one per label set, looked up
 * once and kept), and the cells reach the prom-client counter when it is collected, at each scrape.
 * prom-client's own `inc()` builds, checks and looks up a label string on every call (0.3–0.4 µs, and a page
 * is a few dozen events on the embedded crawl's one event loop); adding to a cell costs a few nanoseconds.
 * A scrape reads exact counts all the same: collecting adds everything counted before it.
 */
export class ScrapedCounter<T extends string> {
  private readonly cells = new Map<string, { labels: LabelValues<T>; cell: CounterCell }>();
  private readonly labelNames: readonly T[];

  constructor(config: CounterConfiguration<T>) {
    const cells = this.cells;
    this.labelNames = config.labelNames ?? [];
    new Counter<T>({
      ...config,
      collect() {
        for (const { labels, cell } of cells.values()) {
          if (cell.n === 0) continue;
          this.inc(labels, cell.n);
          cell.n = 0;
        }
      },
    });
  }

  /** The cell of a label set: the same one every time it is asked for. */
  cell(labels: LabelValues<T>): CounterCell {
    const key = this.labelNames.length === 1 ? String(labels[this.labelNames[0]]) : this.labelNames.map((name) => labels[name]).join('\u0000');
    let entry = this.cells.get(key);
    if (!entry) {
      entry = { labels: { ...labels }, cell: { n: 0 } };
      this.cells.set(key, entry);
    }
    return entry.cell;
  }
}
