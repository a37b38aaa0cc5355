/**
 * Dedicated hosts for frontier politeness and freshness tests, apart from the `site-NNN.test` graph:
 * small sites (a home page and three pages linking each other, robots.txt allowing everything) that
 * misbehave in one way each:
 *
 * - `limited-N.test`: every non-robots request answers 429 or 503 (optionally with `Retry-After`)
 *   until the host has been asked `failures` times, then the page;
 * - `slow-N.test`: every non-robots answer is held back `delayMs` before its headers are sent;
 * - `shared-N.test`: mapped to 127.0.0.2 in the hosts file (one address, several hosts); the home
 *   pages link to each other so one seed reaches them all;
 * - `fresh-0.test`: `/static` never changes, `/news` changes on every request, `/expires` answers
 *   with an `Expires` header one hour ahead;
 * - spider traps (option `traps`), pages generated on request without end:
 *   - `calendar-0.test`: an infinite calendar. `/` links to this month (UTC) `/calendar/YYYY/MM`; a month
 *     links to the months before and after and to its first day `/calendar?date=YYYY-MM-01&view=day`; a
 *     day links to the days before and after and to its month; years 0001 to 9999;
 *   - `loop-0.test`: a `/a/b/a/b/…` generator. `/` and every path made of `a/` and `b/` segments link
 *     relatively to `a/` and `b/` (so paths grow /a/b/a/…), and to the two ordinary pages `/p/1`, `/p/2`.
 *   `trapLinks()` says what a trap page links to, so a test can compute what a crawler with given rules
 *   reaches.
 * - `hubs-0.test` (option `growingHubs`), for recrawl policies: `/` links to the hubs `/hub/1`… and the
 *   clocks `/clock/1`…; a hub lists its items `/item/<hub>-1`… newest first, one more every `linkEveryMs`
 *   since the web started (a hub that keeps gaining links); a clock changes on every request and links
 *   only home (a page that changes without adding links); an item links home and to its hub.
 *   `hubServes` logs, per request to the host, how many of the links served had never been served before.
 *
 * - `app-0.test` (option `scripted`): a site whose links only a script writes (SCRIPTED_APP_JS): the home page
 *   holds an empty app root and `/app.js`, which fetches `/links.json` and writes its links into the page.
 *
 * None of them is linked from the graph or in `expected.reachable`: tests seed them with `extraSeeds()`.
 * Only the request counters live here; validators and delays are applied by the server (test-web.ts).
 */
import { createHash } from 'node:crypto';
import { capitalise, renderError, renderPage, words } from './html';
import { Prng } from './prng';

export interface RateLimitedHostOptions {
  /** Status of the failed answers. */
  status: 429 | 503;
  /** Sent as `Retry-After: <seconds>` with every failed answer when given. */
  retryAfterSeconds?: number;
  /** How many non-robots requests to the host fail before it answers normally. */
  failures: number;
}

export interface SlowHostOptions {
  /** How long every non-robots answer waits before its headers are sent. */
  delayMs: number;
}

export interface GrowingHubsOptions {
  /** Hub pages `/hub/1`…, each gaining one item link every `linkEveryMs`. */
  hubs: number;
  /** Clock pages `/clock/1`…, changing on every request, linking only home. */
  clocks: number;
  linkEveryMs: number;
  /** Items each hub lists from the start. */
  initialItems: number;
}

/** One request to the growing-hubs host: its path, and how many links it served for the first time. */
export interface HubServe {
  path: string;
  at: number;
  newLinks: number;
}

export interface DedicatedHostsOptions {
  rateLimitedHosts: RateLimitedHostOptions[];
  slowHosts: SlowHostOptions[];
  sharedIpHosts: number;
  freshness: boolean;
  /** Adds the spider-trap hosts `calendar-0.test` and `loop-0.test`. */
  traps: boolean;
  /** Adds the script-built host `app-0.test`. */
  scripted?: boolean;
  /** Adds the host `hubs-0.test`, whose hub pages gain links over time. */
  growingHubs?: GrowingHubsOptions;
  seed: number;
}

/** Names of the dedicated hosts by part they play (empty arrays when the option is off). */
export interface DedicatedRoles {
  /** `limited-0.test` …, in the order of `rateLimitedHosts`. */
  rateLimited: string[];
  /** `slow-0.test` …, in the order of `slowHosts`. */
  slow: string[];
  /** `shared-0.test` …, all mapped to 127.0.0.2. */
  sharedIp: string[];
  /** `['fresh-0.test']` when `freshness` is on. */
  fresh: string[];
  /** `['calendar-0.test']` when `traps` is on: an infinite calendar. */
  calendar: string[];
  /** `['loop-0.test']` when `traps` is on: the `/a/b/a/b/…` generator. */
  loop: string[];
  /** `['app-0.test']` when `scripted` is on: links written by a script. */
  scripted: string[];
  /** `['hubs-0.test']` when `growingHubs` is set. */
  hubs: string[];
}

export const DEFAULT_ADDRESS = '127.0.0.1';
export const SHARED_ADDRESS = '127.0.0.2';
const ALLOW_ALL_ROBOTS = 'User-agent: *\nDisallow:\n';
/** Lifetime announced by `/expires` on the fresh host. */
export const EXPIRES_AFTER_MS = 60 * 60 * 1000;

const HTML = 'text/html; charset=utf-8';
/** The script-built home page: an empty app root, no link. */
export const SCRIPTED_HOME = '<!doctype html><html><head><title>App</title></head><body><div id="root"></div><script src="/app.js"></script></body></html>';
/**
 * Its bundle: the links come from JSON; the metadata request is one a crawler must refuse (what an SSRF
 * through a rendered page would try first).
 */
const SCRIPTED_APP_JS = `fetch('http://169.254.169.254/latest/meta-data/').catch(() => {});
fetch('/links.json').then((r) => r.json()).then((links) => {
  document.getElementById('root').innerHTML = links.map((l) => '<p><a href="' + l + '">' + l + '</a></p>').join('');
});`;
const SMALL_SITE_PATHS = ['/', '/p/1', '/p/2', '/p/3'];
const FRESH_SITE_PATHS = ['/', '/static', '/news', '/expires'];
/** Trap sites: the home page is the only fixed path; the rest is generated (trapPage). */
const TRAP_SITE_PATHS = ['/'];
const LOOP_PAGES = ['/p/1', '/p/2'];
const HUB_PATH = /^\/hub\/(\d+)$/;
const CLOCK_PATH = /^\/clock\/(\d+)$/;
const ITEM_PATH = /^\/item\/(\d+)-(\d+)$/;
const LOOP_PATH = /^\/(?:[ab]\/)*$/;
const MONTH_PATH = /^\/calendar\/(\d{4})\/(\d{2})$/;
const DAY_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
/** Last-Modified dates are spread over the year from here (fixed, so the same page always has the same date). */
const LAST_MODIFIED_EPOCH = Date.UTC(2024, 0, 1);
/** `/news` editions are dated from here, one second apart: strictly increasing, always in the past. */
const NEWS_EPOCH = Date.UTC(2025, 0, 1);

type Kind = keyof DedicatedRoles;

interface Page {
  body: Buffer;
  lastModified: number;
}

interface DedicatedSite {
  name: string;
  kind: Kind;
  address: string;
  paths: string[];
  /** Static pages; `/news` on the fresh host is rendered on each request instead. */
  pages: Map<string, Page>;
  rateLimit?: RateLimitedHostOptions;
  delayMs?: number;
}

/** What the server sends for one request to a dedicated host, before validators are applied. */
export interface DedicatedReply {
  status: number;
  contentType: string;
  body: Buffer;
  /** Extra headers (Retry-After, Expires). */
  headers: Record<string, string>;
  /** Hold the answer back this long (slow hosts). */
  delayMs: number;
  /** Epoch ms of the page's Last-Modified date (200 HTML pages only). */
  lastModified?: number;
  /** False for `/expires`, whose Expires header must not be overridden by `Cache-Control: no-cache`. */
  noCache: boolean;
}

export class DedicatedHosts {
  readonly hostNames: string[] = [];
  readonly roles: DedicatedRoles = { rateLimited: [], slow: [], sharedIp: [], fresh: [], calendar: [], loop: [], scripted: [], hubs: [] };
  /** Every request to the growing-hubs host, in order. */
  readonly hubServes: HubServe[] = [];
  /** Links the growing-hubs host has served so far. */
  private readonly servedLinks = new Set<string>();
  private readonly startedAt = Date.now();
  /** Requests to each clock so far (its edition). */
  private readonly clockEditions = new Map<string, number>();
  private readonly sites = new Map<string, DedicatedSite>();
  /** Non-robots requests per rate-limited host since start or the last `resetCounters()`. */
  private readonly asked = new Map<string, number>();
  /** Editions of `/news` served so far (never reset, so no two editions ever share a body). */
  private newsEdition = 0;

  constructor(
    private readonly options: DedicatedHostsOptions,
    readonly port: number,
  ) {
    validate(options);
    options.rateLimitedHosts.forEach((rateLimit, i) => this.add({ name: `limited-${i}.test`, kind: 'rateLimited', rateLimit }));
    options.slowHosts.forEach(({ delayMs }, i) => this.add({ name: `slow-${i}.test`, kind: 'slow', delayMs }));
    for (let i = 0; i < options.sharedIpHosts; i++) this.add({ name: `shared-${i}.test`, kind: 'sharedIp', address: SHARED_ADDRESS });
    if (options.freshness) this.add({ name: 'fresh-0.test', kind: 'fresh', paths: FRESH_SITE_PATHS });
    if (options.traps) {
      this.add({ name: 'calendar-0.test', kind: 'calendar', paths: TRAP_SITE_PATHS });
      this.add({ name: 'loop-0.test', kind: 'loop', paths: TRAP_SITE_PATHS });
    }
    if (options.scripted) this.add({ name: 'app-0.test', kind: 'scripted' });
    for (const site of this.sites.values()) if (!isTrap(site.kind)) this.buildPages(site);
    if (options.growingHubs) this.add({ name: 'hubs-0.test', kind: 'hubs', paths: TRAP_SITE_PATHS });
    for (const site of this.sites.values()) if (!isTrap(site.kind) && site.kind !== 'hubs') this.buildPages(site);
  }

  has(host: string): boolean {
    return this.sites.has(host);
  }

  /** The address the hosts file maps `host` to. */
  addressOf(host: string): string | undefined {
    return this.sites.get(host)?.address;
  }

  /** Absolute URLs of the pages of `host` (home page first). */
  pageUrls(host: string): string[] {
    const site = this.sites.get(host);
    return site ? site.paths.map((p) => this.url(host, p)) : [];
  }

  /** Home pages a crawl of the dedicated hosts starts from (one shared host reaches the others). */
  seeds(): string[] {
    const { rateLimited, slow, sharedIp, fresh, calendar, loop, scripted, hubs } = this.roles;
    return [...rateLimited, ...slow, ...sharedIp.slice(0, 1), ...fresh, ...calendar, ...loop, ...scripted, ...hubs].map((h) => this.url(h, '/'));
  }

  /**
   * Absolute URLs the trap page at `url` links to, in page order; null when `url` is no page of a trap
   * host (it answers 404).
   */
  trapLinks(url: string): string[] | null {
    const target = new URL(url);
    const page = this.trapPage(target.hostname, target.pathname + target.search);
    return page ? page.links.map((l) => new URL(l.href, target).href) : null;
  }

  /** Restarts the failure count of every rate-limited host. */
  resetCounters(): void {
    this.asked.clear();
  }

  /** The answer to `GET path` with `Host: host` (a dedicated host); counts the request. */
  answer(host: string, path: string): DedicatedReply {
    const site = this.sites.get(host);
    if (!site) throw new Error(`not a dedicated host: ${host}`);
    const plain = { headers: {}, delayMs: 0, noCache: true };
    if (path === '/robots.txt') {
      return { ...plain, status: 200, contentType: 'text/plain; charset=utf-8', body: Buffer.from(ALLOW_ALL_ROBOTS) };
    }
    const delayMs = site.delayMs ?? 0;
    if (site.rateLimit) {
      const asked = (this.asked.get(host) ?? 0) + 1;
      this.asked.set(host, asked);
      const { status, retryAfterSeconds, failures } = site.rateLimit;
      if (asked <= failures) {
        const reason = status === 429 ? 'Too Many Requests' : 'Service Unavailable';
        const headers: Record<string, string> = retryAfterSeconds === undefined ? {} : { 'Retry-After': String(retryAfterSeconds) };
        return { ...plain, status, contentType: HTML, body: Buffer.from(renderError(status, reason, this.url(host, path))), headers };
      }
    }
    if (isTrap(site.kind)) {
      const page = this.trapPage(host, path);
      if (!page) return { ...plain, status: 404, contentType: HTML, body: Buffer.from(renderError(404, 'Not Found', this.url(host, path))) };
      const rng = new Prng(this.options.seed ^ hashInt(`${host}${path}`));
      const html = renderPage({
        title: `${page.title} | ${host}`,
        paragraphs: [`${describe(site)} Page ${this.url(host, path)}.`, `${capitalise(words(rng, 15, 40))}.`],
        links: page.links,
      });
      return { ...plain, status: 200, contentType: HTML, body: Buffer.from(html) };
    }
    if (site.kind === 'scripted') {
      if (path === '/') return { ...plain, status: 200, contentType: HTML, body: Buffer.from(SCRIPTED_HOME) };
      if (path === '/app.js') return { ...plain, status: 200, contentType: 'application/javascript', body: Buffer.from(SCRIPTED_APP_JS) };
      if (path === '/links.json') {
        const links = site.paths.filter((p) => p !== '/');
        return { ...plain, status: 200, contentType: 'application/json', body: Buffer.from(JSON.stringify(links)) };
      }
    }
    if (site.kind === 'hubs') return this.hubReply(host, path);
    if (site.kind === 'fresh' && path === '/news') {
      const edition = ++this.newsEdition;
      return { ...plain, status: 200, contentType: HTML, body: this.newsBody(host, edition), lastModified: NEWS_EPOCH + edition * 1000 };
    }
    const page = site.pages.get(path);
    if (!page) {
      return { ...plain, delayMs, status: 404, contentType: HTML, body: Buffer.from(renderError(404, 'Not Found', this.url(host, path))) };
    }
    const reply: DedicatedReply = { ...plain, delayMs, status: 200, contentType: HTML, body: page.body, lastModified: page.lastModified };
    if (site.kind === 'fresh' && path === '/expires') {
      reply.headers = { Expires: new Date(Date.now() + EXPIRES_AFTER_MS).toUTCString() };
      reply.noCache = false;
    }
    return reply;
  }

  /** Title and links (hrefs as written in the page) of a trap page; null for a path the host does not serve. */
  private trapPage(host: string, target: string): { title: string; links: { href: string; text: string }[] } | null {
    const kind = this.sites.get(host)?.kind;
    const { pathname, searchParams } = new URL(target, 'http://trap.invalid');
    if (kind === 'calendar') {
      if (target === '/') {
        const now = new Date();
        return { title: 'Calendar', links: [{ href: monthPath(now.getUTCFullYear(), now.getUTCMonth() + 1), text: 'this month' }] };
      }
      const month = MONTH_PATH.exec(target);
      if (month) {
        const [y, m] = [+month[1], +month[2]];
        if (y < 1 || m < 1 || m > 12) return null;
        const links: { href: string; text: string }[] = [];
        if (y > 1 || m > 1) links.push({ href: monthPath(m === 1 ? y - 1 : y, m === 1 ? 12 : m - 1), text: 'previous month' });
        if (y < 9999 || m < 12) links.push({ href: monthPath(m === 12 ? y + 1 : y, m === 12 ? 1 : m + 1), text: 'next month' });
        links.push({ href: dayPath(utcDate(y, m, 1)), text: 'first day' });
        return { title: `Calendar ${month[1]}-${month[2]}`, links };
      }
      const date = DAY_DATE.exec(searchParams.get('date') ?? '');
      if (pathname === '/calendar' && searchParams.get('view') === 'day' && date && [...searchParams.keys()].length === 2) {
        const day = utcDate(+date[1], +date[2], +date[3]);
        if (+date[1] < 1 || isoDate(day) !== date[0]) return null;
        const links: { href: string; text: string }[] = [];
        const before = new Date(day.getTime() - 86_400_000);
        const after = new Date(day.getTime() + 86_400_000);
        if (before.getUTCFullYear() >= 1) links.push({ href: dayPath(before), text: 'previous day' });
        if (after.getUTCFullYear() <= 9999) links.push({ href: dayPath(after), text: 'next day' });
        links.push({ href: monthPath(+date[1], +date[2]), text: 'month' });
        return { title: `Calendar ${date[0]}`, links };
      }
      return null;
    }
    if (kind === 'loop') {
      const ordinary = LOOP_PAGES.filter((p) => p !== target).map((p) => ({ href: p, text: `page ${p.slice(3)}` }));
      if (LOOP_PATH.test(target)) return { title: `Loop ${target}`, links: [{ href: 'a/', text: 'a' }, { href: 'b/', text: 'b' }, ...ordinary] };
      if (LOOP_PAGES.includes(target)) return { title: `Page ${target}`, links: [{ href: '/', text: 'home' }, ...ordinary] };
      return null;
    }
    return null;
  }

  /** Items hub pages list now. */
  hubItems(): number {
    const { linkEveryMs, initialItems } = this.options.growingHubs!;
    return initialItems + Math.floor((Date.now() - this.startedAt) / linkEveryMs);
  }

  private hubReply(host: string, path: string): DedicatedReply {
    const plain = { headers: {}, delayMs: 0, noCache: true };
    const { hubs, clocks } = this.options.growingHubs!;
    const items = this.hubItems();
    const hub = HUB_PATH.exec(path);
    const clock = CLOCK_PATH.exec(path);
    const item = ITEM_PATH.exec(path);
    const inRange = (n: number, max: number) => n >= 1 && n <= max;
    let title: string;
    let text: string;
    let links: { href: string; text: string }[];
    if (path === '/') {
      title = 'Hubs and clocks';
      text = 'Home of the growing hubs.';
      links = [...range(hubs).map((i) => ({ href: `/hub/${i}`, text: `hub ${i}` })), ...range(clocks).map((i) => ({ href: `/clock/${i}`, text: `clock ${i}` }))];
    } else if (hub && inRange(+hub[1], hubs)) {
      title = `Hub ${hub[1]}`;
      text = `Hub ${hub[1]} lists ${items} items.`;
      links = [
        { href: '/', text: 'home' },
        ...range(items)
          .reverse()
          .map((n) => ({ href: `/item/${hub[1]}-${n}`, text: `item ${n}` })),
      ];
    } else if (clock && inRange(+clock[1], clocks)) {
      const edition = (this.clockEditions.get(path) ?? 0) + 1;
      this.clockEditions.set(path, edition);
      title = `Clock ${clock[1]}`;
      text = `Edition ${edition}: this page changes on every request and adds no link.`;
      links = [{ href: '/', text: 'home' }];
    } else if (item && inRange(+item[1], hubs) && inRange(+item[2], items)) {
      title = `Item ${item[1]}-${item[2]}`;
      text = `An item of hub ${item[1]}.`;
      links = [
        { href: '/', text: 'home' },
        { href: `/hub/${item[1]}`, text: 'hub' },
      ];
    } else {
      this.hubServes.push({ path, at: Date.now(), newLinks: 0 });
      return { ...plain, status: 404, contentType: HTML, body: Buffer.from(renderError(404, 'Not Found', this.url(host, path))) };
    }
    let newLinks = 0;
    for (const link of links) if (!this.servedLinks.has(link.href) && this.servedLinks.add(link.href)) newLinks++;
    this.hubServes.push({ path, at: Date.now(), newLinks });
    const html = renderPage({ title: `${title} | ${host}`, paragraphs: [`Growing-hubs host. Page ${this.url(host, path)}. ${text}`], links });
    return { ...plain, status: 200, contentType: HTML, body: Buffer.from(html) };
  }

  // ---- construction -------------------------------------------------------------------------------

  private url(host: string, path: string): string {
    return new URL(path, `http://${host}:${this.port}/`).href;
  }

  private add(site: { name: string; kind: Kind; address?: string; paths?: string[]; rateLimit?: RateLimitedHostOptions; delayMs?: number }): void {
    const full: DedicatedSite = { address: DEFAULT_ADDRESS, paths: SMALL_SITE_PATHS, pages: new Map(), ...site };
    this.sites.set(full.name, full);
    this.hostNames.push(full.name);
    this.roles[full.kind].push(full.name);
  }

  private buildPages(site: DedicatedSite): void {
    const rng = new Prng(this.options.seed ^ hashInt(site.name));
    for (const path of site.paths) {
      if (site.kind === 'fresh' && path === '/news') continue;
      const links = site.paths.filter((p) => p !== path).map((p) => ({ href: p, text: words(rng, 1, 3) }));
      if (site.kind === 'sharedIp' && path === '/') {
        for (const other of this.roles.sharedIp) if (other !== site.name) links.push({ href: this.url(other, '/'), text: other });
      }
      const html = renderPage({
        title: `${capitalise(words(rng, 2, 4))} | ${site.name}`,
        paragraphs: [`${describe(site)} Page ${this.url(site.name, path)}.`, `${capitalise(words(rng, 15, 40))}.`],
        links,
      });
      site.pages.set(path, { body: Buffer.from(html), lastModified: fixedLastModified(site.name, path) });
    }
  }

  private newsBody(host: string, edition: number): Buffer {
    const others = FRESH_SITE_PATHS.filter((p) => p !== '/news');
    const html = renderPage({
      title: `News, edition ${edition} | ${host}`,
      paragraphs: [`Edition ${edition} of ${this.url(host, '/news')}: this page changes on every request.`],
      links: others.map((p) => ({ href: p, text: p === '/' ? 'home' : p.slice(1) })),
    });
    return Buffer.from(html);
  }
}

/** A strong entity tag for a body: `"<first 16 hex digits of its SHA-1>"`. */
export function entityTag(body: Buffer): string {
  return `"${createHash('sha1').update(body).digest('hex').slice(0, 16)}"`;
}

/** A fixed Last-Modified date (whole seconds) for a page, the same on every run and port. */
export function fixedLastModified(host: string, path: string): number {
  const h = hashInt(`${host}${path}`);
  return LAST_MODIFIED_EPOCH + (h % 365) * 86_400_000 + (h % 86_400) * 1000;
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

function isTrap(kind: Kind): boolean {
  return kind === 'calendar' || kind === 'loop';
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');
const monthPath = (year: number, month: number) => `/calendar/${pad(year, 4)}/${pad(month, 2)}`;
const isoDate = (d: Date) => `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}`;
/** Parameters in canonical (sorted) order, so the URL a crawler fetches is the one written. */
const dayPath = (d: Date) => `/calendar?date=${isoDate(d)}&view=day`;

/** Midnight UTC of a date; years below 100 are not shifted to 19xx as Date.UTC would. */
function utcDate(year: number, month: number, day: number): Date {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  return d;
}

function hashInt(text: string): number {
  return createHash('sha1').update(text).digest().readUInt32BE(0);
}

function describe(site: DedicatedSite): string {
  switch (site.kind) {
    case 'rateLimited':
      return `Rate-limited host: the first ${site.rateLimit!.failures} requests answer ${site.rateLimit!.status}.`;
    case 'slow':
      return `Slow host: every answer waits ${site.delayMs} ms.`;
    case 'sharedIp':
      return `Host sharing the address ${site.address} with the other shared hosts.`;
    case 'fresh':
      return 'Freshness host.';
    case 'calendar':
      return 'Spider trap: a calendar without end.';
    case 'loop':
      return 'Spider trap: relative links that make paths grow without end.';
    case 'scripted':
      return 'Script-built site: only its script writes the links to these pages.';
    case 'hubs':
      return 'Growing-hubs host.';
  }
}

function validate(o: DedicatedHostsOptions): void {
  const fail = (what: string, rule: string) => {
    throw new RangeError(`TestWeb option ${what}: ${rule}`);
  };
  const isCount = (v: unknown) => Number.isInteger(v) && (v as number) >= 0;
  if (!Array.isArray(o.rateLimitedHosts)) fail('rateLimitedHosts', 'must be an array');
  o.rateLimitedHosts.forEach((h, i) => {
    if (h.status !== 429 && h.status !== 503) fail(`rateLimitedHosts[${i}].status=${h.status}`, 'must be 429 or 503');
    if (!isCount(h.failures)) fail(`rateLimitedHosts[${i}].failures=${h.failures}`, 'must be an integer >= 0');
    if (h.retryAfterSeconds !== undefined && !isCount(h.retryAfterSeconds)) {
      fail(`rateLimitedHosts[${i}].retryAfterSeconds=${h.retryAfterSeconds}`, 'must be an integer >= 0');
    }
  });
  if (!Array.isArray(o.slowHosts)) fail('slowHosts', 'must be an array');
  o.slowHosts.forEach((h, i) => {
    if (!Number.isFinite(h.delayMs) || h.delayMs < 0) fail(`slowHosts[${i}].delayMs=${h.delayMs}`, 'must be a number >= 0');
  });
  if (!isCount(o.sharedIpHosts)) fail(`sharedIpHosts=${o.sharedIpHosts}`, 'must be an integer >= 0');
  if (typeof o.traps !== 'boolean') fail(`traps=${String(o.traps)}`, 'must be true or false');
  const g = o.growingHubs;
  if (g) {
    for (const key of ['hubs', 'clocks', 'initialItems'] as const) if (!isCount(g[key])) fail(`growingHubs.${key}=${g[key]}`, 'must be an integer >= 0');
    if (!(g.linkEveryMs > 0)) fail(`growingHubs.linkEveryMs=${g.linkEveryMs}`, 'must be a number > 0');
  }
}
