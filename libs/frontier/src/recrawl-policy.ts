/** What the frontier knows about a page when it schedules its next visit. */
export interface RecrawlFacts {
  /** The interval that brought it back; undefined on its first fetch. */
  previousMs?: number;
  /** Whether its content changed since the last fetch. */
  changed: boolean;
  /**
   * URLs never seen before that it yielded since its last visit was scheduled; undefined when unknown (the
   * policy is `adaptive`, or this is its first or second fetch: the first fetch's links are all new and
   * say nothing about whether it gains links, so the first revisit only takes the count's baseline).
   */
  newLinks?: number;
}

export interface RecrawlBounds {
  initialMs: number;
  minMs: number;
  maxMs: number;
}

/**
 * The next recrawl interval: the first is `initialMs`, then it halves or doubles within [min, max]. It
 * halves when the page yielded new URLs (a hub that keeps gaining links: revisiting it finds more of the
 * web) or, without a count of new URLs, when it changed; otherwise it doubles, so that a page whose
 * content changes without adding links (a clock, a rotating quote) costs no more fetches than a still one.
 */
export function recrawlInterval(facts: RecrawlFacts, bounds: RecrawlBounds): number {
  if (facts.previousMs === undefined) return bounds.initialMs;
  const sooner = facts.newLinks === undefined ? facts.changed : facts.newLinks > 0;
  const next = sooner ? Math.round(facts.previousMs / 2) : facts.previousMs * 2;
  return Math.min(bounds.maxMs, Math.max(bounds.minMs, next));
}
