import { canonicalize, pathRepeats, spiderTrap, TrapLimits } from '@crawler/url';
import { TestWeb } from '../web/test-web';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { crawlTestWeb, FOLLOW_EVERY_LINK } from '../support/test-web-crawl';

const DELAY_S = 0.05;
/** Small enough to keep the test short, large enough that the window always holds a first of the month (day pages). */
const WINDOW_DAYS = 20;
/** Above what the calendar's window lets through (at most 1 + 3 months + 41 days), so the calendar is bounded by the trap rule alone. */
const BUDGET = 60;
const LIMITS: TrapLimits = { maxPathRepeats: 2, calendarWindowDays: WINDOW_DAYS, maxQueryParams: 12 };

afterAll(removeTempDirs);

/**
 * What a crawl that follows every link from `seed` fetches when it drops what the trap rules drop at
 * time `now` (no depth limit, no budget): a breadth-first walk of the trap host's link graph.
 */
function reachableAt(web: TestWeb, seed: string, now: number): Set<string> {
  const reached = new Set([seed]);
  const queue = [seed];
  while (queue.length) {
    for (const href of web.trapLinks(queue.shift()!) ?? []) {
      const canonical = canonicalize(href);
      if (!canonical.ok || reached.has(canonical.url) || spiderTrap(canonical.url, LIMITS, now)) continue;
      reached.add(canonical.url);
      queue.push(canonical.url);
    }
  }
  return reached;
}

/** Page URLs the test web was asked for on `host`, robots.txt left out, with how often. */
function pageRequests(web: TestWeb, host: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of web.requests) {
    if (r.host !== host || r.path === '/robots.txt') continue;
    const url = new URL(r.path, web.origin(host)).href;
    counts.set(url, (counts.get(url) ?? 0) + 1);
  }
  return counts;
}

/**
 * Spider traps on the test web: an infinite calendar and a `/a/b/a/b/…` generator. With no depth limit the
 * crawl still ends on its own, and the number of fetches from each trap host is bounded by the rules:
 * the calendar by its window (exactly the months and days within it), the generator by the repeated-path
 * rule and the per-host page budget.
 */
describe('spider traps: the crawl of an endless site ends, with a bounded number of fetches', () => {
  let web: TestWeb;
  let summary: Record<string, any>;
  let calendar: string;
  let loop: string;
  let startedAt: number;
  let endedAt: number;

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 12, traps: true });
    [calendar] = web.roles.calendar;
    [loop] = web.roles.loop;
    const dir = tempDir('spider-traps-');
    startedAt = Date.now();
    summary = await crawlTestWeb(web, dir, {
      args: [...web.extraSeeds(), ...FOLLOW_EVERY_LINK],
      delaySeconds: DELAY_S,
      env: {
        SITEMAP_MODE: 'off',
        URL_FILTER_CALENDAR_WINDOW_DAYS: String(WINDOW_DAYS),
        URL_FILTER_MAX_PATH_REPEATS: String(LIMITS.maxPathRepeats),
        URL_FILTER_MAX_PAGES_PER_HOST: String(BUDGET),
      },
    });
    endedAt = Date.now();
  }, 150_000);

  afterAll(() => web?.close());

  it('terminates on its own and says so', () => {
    expect(summary.complete).toBe(true);
    expect(Object.keys(summary.totals).filter((k) => k.startsWith('failed.'))).toEqual([]);
  });

  it('fetches from the calendar exactly the months and days within the window, each once', () => {
    const seed = `${web.origin(calendar)}/`;
    // The crawler judged each link at some moment of the run: what it fetched lies between what the rules
    // admit at the start and at the end (the same set, unless a window edge passed during the run).
    const atStart = reachableAt(web, seed, startedAt);
    const atEnd = reachableAt(web, seed, endedAt);
    const fetched = pageRequests(web, calendar);
    expect([...fetched.values()].filter((n) => n !== 1)).toEqual([]);
    expect([...fetched.keys()].filter((url) => !atStart.has(url) && !atEnd.has(url))).toEqual([]);
    expect([...atStart].filter((url) => atEnd.has(url) && !fetched.has(url))).toEqual([]);
    expect(fetched.size).toBeLessThanOrEqual(Math.max(atStart.size, atEnd.size));
    // Home, this month and its neighbours within reach, and the days around today.
    expect(fetched.size).toBeGreaterThan(2 * WINDOW_DAYS);
    expect(fetched.size).toBeLessThan(BUDGET);
    expect(summary.totals['filtered.trap.calendar']).toBeGreaterThan(0);
  });

  it('fetches from the /a/b/a/b/… generator its page budget, never a repeated run, each page once', () => {
    const fetched = pageRequests(web, loop);
    expect([...fetched.values()].filter((n) => n !== 1)).toEqual([]);
    // Every admitted URL is fetched, and the filter admits exactly the budget of distinct URLs of an endless host.
    expect(fetched.size).toBe(BUDGET);
    expect([...fetched.keys()].filter((url) => pathRepeats(new URL(url).pathname) > LIMITS.maxPathRepeats)).toEqual([]);
    expect(fetched.has(`${web.origin(loop)}/p/1`)).toBe(true);
    expect(summary.totals['filtered.trap.repeated-path']).toBeGreaterThan(0);
    expect(summary.totals['filtered.host-budget']).toBeGreaterThan(0);
  });

  it('asks each trap host for robots.txt once, and nothing but trap hosts', () => {
    for (const host of [calendar, loop]) expect(web.requests.filter((r) => r.host === host && r.path === '/robots.txt')).toHaveLength(1);
    expect(new Set(web.requests.map((r) => r.host))).toEqual(new Set([calendar, loop]));
    expect(summary.pagesFetched).toBe(pageRequests(web, calendar).size + pageRequests(web, loop).size);
  });
});
