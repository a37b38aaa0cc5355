import type { CrawlUrl } from './payloads';

/**
 * Chooses the front queue of new URLs (0 is served first, `frontQueues - 1` last): how the frontier orders
 * what it fetches. The frontier runs a chain: its own breadth-first scoring first, then the prioritizer of
 * each enabled plugin that has one, in PLUGINS order, each given what the ones before it chose (`proposed`)
 * to keep, refine or replace. A plain interface here, not in the frontier or the plugin SDK, because both
 * sides implement it and neither should depend on the other for it.
 */
export interface Prioritizer {
  /**
   * One front queue per URL, in order. `proposed` holds the choice of the prioritizers before this one (for
   * the first, the last queue for every URL). A result outside [0, frontQueues) is clamped by the frontier;
   * a throw fails the batch (retried like any enqueue failure), so a scorer whose state is unreachable
   * should fall back to `proposed` when that is the better outcome.
   */
  prioritize(urls: readonly CrawlUrl[], proposed: readonly number[], frontQueues: number): number[] | Promise<number[]>;
}
