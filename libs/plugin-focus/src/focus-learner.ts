import type { StateStore } from '@crawler/state';

/** What the learner knows of a place: links followed from there and how many led to relevant pages; its own pages judged and how many were relevant. */
export interface PlaceStats {
  followed: number;
  relevant: number;
  pages: number;
  relevantPages: number;
}

/**
 * The hash of the learner's counts: fields `<place>|n` (links followed from there), `<place>|r` (of which
 * led to relevant pages), `<place>|pn` (its pages judged), `<place>|pr` (of which relevant).
 */
export const LEARNER_HASH = 'learner';
/** The hash naming each place learned, so that their number is bounded. */
const PLACES_HASH = 'places';
const PLACE_COUNT = 'place-count';
/** Pseudo-counts: how many links' worth of evidence the prior weighs against what was seen. */
const PRIOR_WEIGHT = 2;
/** How often a wait for a page's judgement looks again. */
const JUDGEMENT_POLL_MS = 10;
/**
 * How long a page's judgement is kept for the prioritizer: its links reach the frontier within seconds of
 * the page being parsed, so a minute covers a slow pipeline without keeping one key per page crawled.
 */
const JUDGEMENT_TTL_MS = 60_000;
/** Counts are kept in hundredths, so that a page counts by its relevance (0…1), not only as relevant or not. */
const UNIT = 100;

/**
 * The places a page is at: its host, and its host with the first segment of its path (`example.com/news`).
 * Two levels because a site often has one topical section among others, and the host alone would average it away.
 */
export function placesOf(url: string): { host: string; prefix: string } | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const segment = parsed.pathname.split('/')[1] ?? '';
  return { host: parsed.host, prefix: `${parsed.host}/${segment}` };
}

/**
 * Learns, per host and per path prefix, how often links from there led to relevant pages (and how often
 * the pages there were relevant): the page hook records each judged page against its own places and those
 * of the page it was found on (its referrer); the frontier's prioritizer reads the counts. Kept in the shared state store, so the two can run in different processes.
 *
 * Bounded by `maxPlaces`: each place is named once in a hash of places with a counter beside it; past the
 * bound a new place is not learned (its links keep the prior) and the refusal is reported to the caller.
 */
export class FocusLearner {
  constructor(
    private readonly state: StateStore,
    private readonly maxPlaces: number,
  ) {}

  /**
   * A page was judged: counted for its own host and prefix (`pn`, `pr`), and for those of the page it was
   * found on (`n`, `r`), if known. `relevance` is its score (0…1): a page with some of the topic's terms
   * counts for part, so that the places near a topic rank above those far from it before a relevant page
   * is found (a gradient to climb). False if a place was refused (the bound).
   */
  async record(url: string, referrer: string | undefined, relevance: number): Promise<boolean> {
    const hit = Math.round(Math.min(1, Math.max(0, relevance)) * UNIT);
    const amounts = new Map<string, number>();
    let refused = false;
    const count = async (page: string, total: string, hits: string) => {
      const places = placesOf(page);
      if (!places) return;
      for (const place of [places.host, places.prefix]) {
        if (!(await this.admit(place))) {
          refused = true;
          continue;
        }
        amounts.set(`${place}|${total}`, (amounts.get(`${place}|${total}`) ?? 0) + UNIT);
        if (hit > 0) amounts.set(`${place}|${hits}`, (amounts.get(`${place}|${hits}`) ?? 0) + hit);
      }
    };
    await count(url, 'pn', 'pr');
    if (referrer) await count(referrer, 'n', 'r');
    if (amounts.size) await this.state.hashIncrMany(LEARNER_HASH, amounts);
    return !refused;
  }

  /**
   * The page's own score, kept briefly under its URL for the prioritizer, which scores the page's links
   * by it (they reach the frontier about when the page is judged: the two go out together).
   */
  async markJudged(url: string, relevance: number): Promise<void> {
    await this.state.set(`judged|${url}`, String(relevance), JUDGEMENT_TTL_MS);
  }

  /**
   * The score of the page at `url`, waiting up to `waitMs` for its hook to judge it; undefined if it was
   * not judged by then (a slow or stopped hook: its links are scored by their places alone). Polls, because
   * the state store has no notification and the hook may run in another process.
   */
  async judgement(url: string, waitMs: number): Promise<number | undefined> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const value = await this.state.get(`judged|${url}`);
      if (value !== null) return Number(value);
      if (Date.now() >= deadline) return undefined;
      await new Promise((resolve) => setTimeout(resolve, JUDGEMENT_POLL_MS));
    }
  }

  /**
   * Whether this is the first time the host is met, by a page judged or a link scored: true once per host
   * (atomically, HSETNX), then false; false too past `maxPlaces` (the host is not learned).
   */
  async firstSighting(host: string): Promise<boolean> {
    return (await this.name(host)) === 'new';
  }

  async stats(place: string): Promise<PlaceStats> {
    const [n, r, pn, pr] = await Promise.all(['n', 'r', 'pn', 'pr'].map((f) => this.state.hashGet(LEARNER_HASH, `${place}|${f}`)));
    const count = (value: string | null) => Number(value ?? 0) / UNIT;
    return { followed: count(n), relevant: count(r), pages: count(pn), relevantPages: count(pr) };
  }

  private async admit(place: string): Promise<boolean> {
    return (await this.name(place)) !== 'full';
  }

  /** A new place is named atomically (HSETNX): only its first sighting counts towards the bound. */
  private async name(place: string): Promise<'known' | 'new' | 'full'> {
    if ((await this.state.hashGet(PLACES_HASH, place)) !== null) return 'known';
    if (Number((await this.state.get(PLACE_COUNT)) ?? 0) >= this.maxPlaces) return 'full';
    if ((await this.state.hashSetIfAbsent(PLACES_HASH, place, '1')) !== null) return 'known';
    await this.state.incr(PLACE_COUNT);
    return 'new';
  }
}

/**
 * The expected yield of links from a place. Where its links led is the evidence; until there is much of it,
 * the place's own share of relevant pages stands in (topical locality: pages on a topic link to pages on it),
 * and before that the prior. Each level is smoothed towards the one below by PRIOR_WEIGHT pseudo-counts.
 * The stand-in matters because outcomes lag: a link is scored when its page is parsed, long before the
 * pages it leads to are judged, while the page itself is judged at once.
 */
export function expectedYield(stats: PlaceStats, prior: number): number {
  const own = (stats.relevantPages + prior * PRIOR_WEIGHT) / (stats.pages + PRIOR_WEIGHT);
  return (stats.relevant + own * PRIOR_WEIGHT) / (stats.followed + PRIOR_WEIGHT);
}

/**
 * What the link's own target says: the share of relevant pages at its path prefix (or host) once some were
 * judged, else nothing. A site found relevant is worth its links from anywhere (a long link into a topic
 * cluster, found on a page that is not on the topic).
 */
export function targetShare(host: PlaceStats, prefix: PlaceStats, prior: number): number | undefined {
  const stats = prefix.pages > 0 ? prefix : host.pages > 0 ? host : undefined;
  return stats && (stats.relevantPages + prior * PRIOR_WEIGHT) / (stats.pages + PRIOR_WEIGHT);
}

/** The estimate for a link found on a page: its path prefix once that has some evidence of its own, else its host. */
export function linkYield(host: PlaceStats, prefix: PlaceStats, prior: number): number {
  return prefix.followed + prefix.pages >= PRIOR_WEIGHT ? expectedYield(prefix, prior) : expectedYield(host, prior);
}
