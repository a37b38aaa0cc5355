import type { Changefreq } from '@crawler/contracts';

/** What the frontier knows about a page when it schedules its next visit. */
export interface RecrawlFacts {
  /** How often its sitemap says it changes (sitemapChangeMs), when it came from one: its first interval. */
  sitemapMs?: number;
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
 * The next recrawl interval: the first is what the page's sitemap said (`sitemapMs`, within [min, max]) or
 * else `initialMs`, then it halves or doubles within [min, max]: what the crawl sees of the page itself
 * outweighs what its sitemap claimed. It
 * halves when the page yielded new URLs (a hub that keeps gaining links: revisiting it finds more of the
 * web) or, without a count of new URLs, when it changed; otherwise it doubles, so that a page whose
 * content changes without adding links (a clock, a rotating quote) costs no more fetches than a still one.
 */
export function recrawlInterval(facts: RecrawlFacts, bounds: RecrawlBounds): number {
  if (facts.previousMs === undefined) return facts.sitemapMs === undefined ? bounds.initialMs : clamp(facts.sitemapMs, bounds);
  const sooner = facts.newLinks === undefined ? facts.changed : facts.newLinks > 0;
  const next = sooner ? Math.round(facts.previousMs / 2) : facts.previousMs * 2;
  return clamp(next, bounds);
}

function clamp(ms: number, bounds: RecrawlBounds): number {
  return Math.min(bounds.maxMs, Math.max(bounds.minMs, ms));
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** `<changefreq>` as an interval; `always` and `never` stand for the bounds' ends. */
const CHANGEFREQ_MS: Record<Changefreq, number> = {
  always: 0,
  hourly: HOUR,
  daily: DAY,
  weekly: 7 * DAY,
  monthly: 30 * DAY,
  yearly: 365 * DAY,
  never: Number.POSITIVE_INFINITY,
};

/**
 * How often a page's sitemap says it changes: its `<changefreq>` when given (the site's own statement of
 * it), else the age of its `<lastmod>` (a page unchanged for a long time is likely to stay so; one changed
 * an hour ago, to change again soon: the age estimates the interval between changes); undefined without
 * either, or with a `<lastmod>` in the future (a clock gone wrong, or a claim to ignore).
 */
export function sitemapChangeMs(listed: { lastmod?: number; changefreq?: Changefreq }, now: number): number | undefined {
  if (listed.changefreq) return CHANGEFREQ_MS[listed.changefreq];
  if (listed.lastmod === undefined || listed.lastmod > now) return undefined;
  return now - listed.lastmod;
}
