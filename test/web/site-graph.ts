/**
 * The content of the test web: which virtual hosts exist, what each one answers on every path, and its
 * robots.txt. Built deterministically from a seed; the port only shows up inside absolute links and
 * Location headers, so the structure of the web is the same whatever port the server got.
 *
 * Nothing here touches the network: `reply(host, path)` is what the server sends, and `resource()` is
 * what the expectation BFS walks (expected-crawl.ts), so the two cannot drift apart.
 */
import { gzipSync } from 'node:zlib';
import * as iconv from 'iconv-lite';
import { Prng } from './prng';
import { RUSSIAN_TEXT, capitalise, escapeHtml, renderError, renderPage, words } from './html';
import { encodePng, PngSpec, withBadIhdrCrc } from './png';

export interface SiteGraphOptions {
  /** Number of virtual hosts. */
  hosts: number;
  /** Pages per host: `/` and `/p/1` … `/p/{n-1}`. */
  pagesPerHost: number;
  seed: number;
  /** How many hosts announce `Crawl-delay: 1`. */
  crawlDelayHosts: number;
}

/** The smallest web that still has a host for every role. */
const MIN_HOSTS = 12;
const MIN_PAGES_PER_HOST = 2;
const CRAWL_DELAY_SECONDS = 1;

type RobotsKind = 'normal' | 'missing' | 'error' | 'disallow-all';

export interface Robots {
  kind: RobotsKind;
  /** 200, 404 (allow everything) or 500 (RFC 9309: disallow everything). */
  status: 200 | 404 | 500;
  body: string;
  /** Path prefixes disallowed for every user agent (status 200 only). */
  disallow: string[];
  crawlDelay?: number;
  /** Absolute URLs of its `Sitemap:` lines. */
  sitemaps?: string[];
}

/** An HTML answer and the links a parser would find in it. */
export interface PageResource {
  kind: 'page';
  status: 200 | 500;
  contentType: string;
  body: Buffer;
  /** `<base href>` as written in the page, if any. */
  base?: string;
  /** Every `<a href>` as written in the page (relative ones resolve against `base` or the page URL). */
  hrefs: string[];
  /** Every `<img src>` as written in the page (a few pages show images: see HostRoles.images). */
  images?: string[];
}

/** An image: PNGs (valid ones, a byte-identical copy, corrupt ones) that pages show with `<img>`. */
export interface ImageResource {
  kind: 'image';
  status: 200;
  contentType: string;
  body: Buffer;
  /** What the PNG holds, or why it is corrupt (the reason a PNG check must give). */
  png: PngSpec | { corrupt: 'bad-ihdr-crc' | 'truncated' };
}

interface RedirectResource {
  kind: 'redirect';
  status: 301 | 302;
  /** The Location header as sent (may be relative). */
  location: string;
}

/** A sitemap (sitemaps.org): a urlset of pages or an index of sitemaps, XML or gzip-compressed XML. */
interface SitemapResource {
  kind: 'sitemap';
  status: 200;
  contentType: string;
  body: Buffer;
  /** Absolute URLs of the pages it lists (urlset) or of its child sitemaps (index). */
  entries: string[];
  index: boolean;
}

export type Resource = PageResource | RedirectResource | SitemapResource | ImageResource;

/** What the server sends for one request. */
export interface Reply {
  status: number;
  contentType: string;
  body: Buffer;
  location?: string;
}

/** The hosts that play a special part, for tests that want to aim at one. */
export interface HostRoles {
  /** The host the crawl starts from. */
  seed: string;
  /** robots.txt answers 500: the whole host is disallowed. */
  robotsError: string[];
  /** robots.txt is `User-agent: *` / `Disallow: /`. */
  disallowAll: string;
  /** robots.txt answers 404: everything allowed, `/private/…` included. */
  robotsMissing: string[];
  /** robots.txt has `Crawl-delay: 1`. */
  crawlDelay: string[];
  /** `/copy` is byte-identical to `/p/1`. */
  copy: string[];
  /** `/cp1251` is a windows-1251 page. */
  charset: string;
  /** `/go` on `from` answers 302 to `/landing` on `to`. */
  crossRedirect: { from: string; to: string };
  /** The home page declares `<base href="/p/">`. */
  baseHref: string;
  /**
   * Sitemaps. `probed` (the seed host) names none in robots.txt but serves `/sitemap.xml`; `announced`
   * names an index in robots.txt (`Sitemap:`), which lists a gzip urlset, a plain one and a missing one.
   * Both list orphan pages (`/orphan/N`) that no page links to, and a page robots.txt disallows.
   */
  sitemaps: { probed: string; announced: string };
  /**
   * Pages showing images with `<img>` (a plain crawl never fetches them; with a plugin claiming `.png`,
   * the PNGs are fetched): the seed host's `/` and `/p/1`, and the home page of `other`. See IMAGE_PAGES.
   */
  images: { host: string; other: string };
}

interface Target {
  host: string;
  path: string;
}

interface Site {
  name: string;
  robots: Robots;
  resources: Map<string, Resource>;
}

const HTML = 'text/html; charset=utf-8';
const BASE_HREF = '/p/';
const SITEMAP_INDEX = '/sitemaps/index.xml';

export class SiteGraph {
  readonly hostNames: string[];
  readonly roles: HostRoles;
  private readonly sites = new Map<string, Site>();
  private readonly rng: Prng;
  private readonly blocked: Set<number>;

  constructor(
    private readonly options: SiteGraphOptions,
    readonly port: number,
  ) {
    validate(options);
    const { hosts } = options;
    const width = Math.max(3, String(hosts - 1).length);
    this.hostNames = Array.from({ length: hosts }, (_, i) => `site-${String(i).padStart(width, '0')}.test`);
    this.rng = new Prng(options.seed);
    this.roles = this.assignRoles();
    this.blocked = new Set([...this.roles.robotsError, this.roles.disallowAll].map((h) => this.indexOf(h)));
    for (let i = 0; i < hosts; i++) this.buildSite(i);
    // Last, so that the rest of the web is what it was before sitemaps were added (same random draws).
    for (const host of new Set([this.roles.sitemaps.probed, this.roles.sitemaps.announced])) this.buildSitemaps(host, this.sites.get(host)!.resources);
    // After that, images: no random draw, only <img> tags added to three pages and the images they show.
    this.buildImages();
  }

  origin(host: string): string {
    return new URL(`http://${host}:${this.port}/`).origin;
  }

  url(host: string, path: string): string {
    return new URL(path, this.origin(host)).href;
  }

  hasHost(host: string): boolean {
    return this.sites.has(host);
  }

  robots(host: string): Robots | undefined {
    return this.sites.get(host)?.robots;
  }

  /** Would a crawler obeying this host's robots.txt fetch `path`? (Unknown hosts: yes.) */
  isAllowed(host: string, path: string): boolean {
    const robots = this.sites.get(host)?.robots;
    if (!robots || robots.status === 404) return true;
    if (robots.status === 500) return false;
    return !robots.disallow.some((prefix) => path.startsWith(prefix));
  }

  /**
   * The sitemap URLs a crawler learns from this host's robots.txt: its `Sitemap:` lines, else (with probing)
   * `/sitemap.xml`; none while robots.txt fails (5xx: nothing is known of the site yet).
   */
  sitemapsOf(host: string, probe = true): string[] {
    const robots = this.sites.get(host)?.robots;
    if (!robots || robots.status === 500) return [];
    if (robots.sitemaps?.length) return robots.sitemaps;
    return probe ? [this.url(host, '/sitemap.xml')] : [];
  }

  /** The resource at `path` (path + query) on `host`; undefined means 404. */
  resource(host: string, path: string): Resource | undefined {
    const site = this.sites.get(host);
    if (!site) return undefined;
    const found = site.resources.get(path);
    if (found) return found;
    if (path.startsWith('/private/')) return this.privatePage(host, path);
    return undefined;
  }

  /** The full answer to `GET path` with `Host: host`. */
  reply(host: string, path: string): Reply {
    const site = this.sites.get(host);
    if (!site) return htmlReply(404, renderError(404, 'Unknown host', host));
    if (path === '/robots.txt') {
      const { status, body } = site.robots;
      const contentType = status === 200 ? 'text/plain; charset=utf-8' : HTML;
      return { status, contentType, body: Buffer.from(body) };
    }
    const resource = this.resource(host, path);
    if (!resource) return htmlReply(404, renderError(404, 'Not Found', this.url(host, path)));
    if (resource.kind === 'page' || resource.kind === 'sitemap' || resource.kind === 'image') {
      return { status: resource.status, contentType: resource.contentType, body: resource.body };
    }
    const target = new URL(resource.location, this.url(host, path)).href;
    return { ...htmlReply(resource.status, renderError(resource.status, 'Moved', target)), location: resource.location };
  }

  // ---- construction -------------------------------------------------------------------------------

  private indexOf(host: string): number {
    return this.hostNames.indexOf(host);
  }

  private assignRoles(): HostRoles {
    const { hosts, crawlDelayHosts } = this.options;
    const rng = this.rng;
    const name = (i: number) => this.hostNames[i];
    // Host 0 is the seed and stays plain; every other role gets its own host.
    const others = rng.shuffle(Array.from({ length: hosts - 1 }, (_, i) => i + 1));
    let cursor = 0;
    const take = (count: number) => others.slice(cursor, (cursor += count)).map(name);

    const robotsError = take(hosts >= 100 ? 2 : 1);
    const [disallowAll] = take(1);
    const robotsMissing = take(Math.max(1, Math.round(hosts * 0.02)));
    const normalRobots = others.slice(cursor).map(name);
    const copy = take(Math.max(2, Math.round(hosts * 0.02)));
    const [charset, from, to, baseHref] = take(4);
    if (crawlDelayHosts > normalRobots.length) {
      throw new RangeError(`crawlDelayHosts=${crawlDelayHosts}: at most ${normalRobots.length} for ${hosts} hosts`);
    }
    const crawlDelay = rng.shuffle(normalRobots).slice(0, crawlDelayHosts);
    return {
      seed: name(0),
      robotsError,
      disallowAll,
      robotsMissing,
      crawlDelay,
      copy,
      charset,
      crossRedirect: { from, to },
      baseHref,
      sitemaps: { probed: name(0), announced: charset },
      images: { host: name(0), other: charset },
    };
  }

  private buildRobots(host: string): Robots {
    const r = this.roles;
    if (r.robotsError.includes(host)) {
      return { kind: 'error', status: 500, body: renderError(500, 'Internal Server Error', this.url(host, '/robots.txt')), disallow: ['/'] };
    }
    if (r.robotsMissing.includes(host)) {
      return { kind: 'missing', status: 404, body: renderError(404, 'Not Found', this.url(host, '/robots.txt')), disallow: [] };
    }
    if (host === r.disallowAll) {
      return { kind: 'disallow-all', status: 200, body: 'User-agent: *\nDisallow: /\n', disallow: ['/'] };
    }
    const lines = ['# Test web robots.txt', 'User-agent: *', 'Disallow: /private/'];
    let crawlDelay: number | undefined;
    if (r.crawlDelay.includes(host)) {
      crawlDelay = CRAWL_DELAY_SECONDS;
      lines.push(`Crawl-delay: ${crawlDelay}`);
    }
    const sitemaps = host === r.sitemaps.announced ? [this.url(host, SITEMAP_INDEX)] : undefined;
    for (const sitemap of sitemaps ?? []) lines.push(`Sitemap: ${sitemap}`);
    return { kind: 'normal', status: 200, body: `${lines.join('\n')}\n`, disallow: ['/private/'], crawlDelay, sitemaps };
  }

  private buildSite(i: number): void {
    const host = this.hostNames[i];
    const n = this.options.pagesPerHost;
    const r = this.roles;
    const resources = new Map<string, Resource>();
    this.sites.set(host, { name: host, robots: this.buildRobots(host), resources });

    for (let k = 0; k < n; k++) {
      const path = pagePath(k);
      const servedAt = [path];
      if (k === 1 && r.copy.includes(host)) servedAt.push('/copy');
      const base = k === 0 && host === r.baseHref ? BASE_HREF : undefined;
      const page = this.buildPage(host, servedAt, base, this.linkTargets(i, k));
      for (const at of servedAt) resources.set(at, page);
    }
    for (let k = 1; k < n; k++) {
      resources.set(`/old/${k}`, { kind: 'redirect', status: 301, location: pagePath(k) });
    }
    const errorBody = renderError(500, 'Internal Server Error', this.url(host, '/error'));
    resources.set('/error', { kind: 'page', status: 500, contentType: HTML, body: Buffer.from(errorBody), hrefs: [] });

    if (host === r.charset) resources.set('/cp1251', charsetPage());
    if (host === r.crossRedirect.from) {
      resources.set('/go', { kind: 'redirect', status: 302, location: this.url(r.crossRedirect.to, '/landing') });
    }
    if (host === r.crossRedirect.to) {
      const targets = [
        { host, path: '/' },
        { host, path: pagePath(1) },
      ];
      resources.set('/landing', this.buildPage(host, ['/landing'], undefined, targets));
    }
  }

  private buildSitemaps(host: string, resources: Map<string, Resource>): void {
    const url = (path: string) => this.url(host, path);
    for (const k of [1, 2, 3]) resources.set(`/orphan/${k}`, this.buildPage(host, [`/orphan/${k}`], undefined, [{ host, path: '/' }]));
    if (host === this.roles.sitemaps.probed) {
      resources.set('/sitemap.xml', urlset([url('/'), url(pagePath(1)), url('/orphan/1'), url('/orphan/2'), url('/private/sitemapped')]));
      return;
    }
    resources.set(SITEMAP_INDEX, sitemapIndex([url('/sitemaps/pages.xml.gz'), url('/sitemaps/more.xml'), url('/sitemaps/gone.xml')]));
    const pages = urlset([url('/orphan/1'), url('/orphan/2'), url(pagePath(1)), url('/private/sitemapped')]);
    resources.set('/sitemaps/pages.xml.gz', { ...pages, contentType: 'application/gzip', body: gzipSync(pages.body) });
    resources.set('/sitemaps/more.xml', { ...urlset([url('/orphan/3')]), contentType: 'text/xml; charset=utf-8' });
  }

  /**
   * The images and the pages showing them. The seed host's `/` shows two PNGs, a JPEG (not served: no PNG
   * plugin claims it, so nothing ever asks for it) and a PNG under `/private/` (disallowed by robots.txt);
   * its `/p/1` shows one of those PNGs again, a byte-identical copy of it at another URL, a 1-bit and a
   * 16-bit grayscale PNG, one whose IHDR CRC is wrong and one cut short. The home page of `other` shows an
   * indexed PNG of its own and, by absolute URL, one of the seed host's.
   */
  private buildImages(): void {
    const { host, other } = this.roles.images;
    const at = (h: string) => this.sites.get(h)!.resources;
    const png = (h: string, path: string, spec: PngSpec) => at(h).set(path, { kind: 'image', status: 200, contentType: 'image/png', body: encodePng(spec), png: spec });
    png(host, '/images/logo.png', { width: 16, height: 16, bitDepth: 8, colorType: 6 });
    png(host, '/images/photo.png', { width: 120, height: 80, bitDepth: 8, colorType: 2, shade: 1 });
    png(host, '/images/icon.png', { width: 1, height: 1, bitDepth: 1, colorType: 0 });
    png(host, '/images/deep.png', { width: 7, height: 5, bitDepth: 16, colorType: 0, shade: 2 });
    png(host, '/private/hidden.png', { width: 3, height: 3, bitDepth: 8, colorType: 2 });
    png(other, '/img/banner.png', { width: 200, height: 40, bitDepth: 4, colorType: 3, shade: 3 });
    const logo = at(host).get('/images/logo.png') as ImageResource;
    at(host).set('/images/logo-copy.png', { ...logo });
    const broken = encodePng({ width: 10, height: 10, bitDepth: 8, colorType: 2, shade: 4 });
    at(host).set('/images/broken.png', { kind: 'image', status: 200, contentType: 'image/png', body: withBadIhdrCrc(broken), png: { corrupt: 'bad-ihdr-crc' } });
    const whole = encodePng({ width: 30, height: 30, bitDepth: 8, colorType: 6, shade: 5 });
    at(host).set('/images/truncated.png', {
      kind: 'image',
      status: 200,
      contentType: 'image/png',
      body: whole.subarray(0, whole.length - 30),
      png: { corrupt: 'truncated' },
    });

    const show = (h: string, path: string, srcs: string[]) => {
      const page = at(h).get(path) as PageResource;
      const tags = srcs.map((src) => `<img src="${escapeHtml(src)}" alt="">`).join('\n');
      const body = Buffer.from(page.body.toString().replace('</body>', `<p>\n${tags}\n</p>\n</body>`));
      at(h).set(path, { ...page, body, images: srcs });
    };
    show(host, '/', ['/images/logo.png', 'images/photo.png', '/images/photo.jpg', '/private/hidden.png']);
    show(host, pagePath(1), ['/images/logo.png', '../images/logo-copy.png', '/images/icon.png', '/images/deep.png', '/images/broken.png', '/images/truncated.png']);
    show(other, '/', ['/img/banner.png', this.url(host, '/images/icon.png')]);
  }

  /** Where page k of host i links to (before choosing how each href is written). */
  private linkTargets(i: number, k: number): Target[] {
    const { hosts, pagesPerHost: n } = this.options;
    const rng = this.rng;
    const host = this.hostNames[i];
    const r = this.roles;
    const targets: Target[] = [];
    const add = (t: Target) => {
      if (!targets.some((x) => x.host === t.host && x.path === t.path)) targets.push(t);
    };
    const randomPage = () => pagePath(rng.int(0, n - 1));

    // Structure: the home page opens the host and the ring of hosts; pages form a chain.
    if (k === 0) {
      add({ host, path: pagePath(1) });
      const next = (i + 1) % hosts;
      add({ host: this.hostNames[next], path: '/' });
      if (this.blocked.has(next)) add({ host: this.hostNames[this.nextCrawlable(next)], path: '/' });
      if (r.copy.includes(host)) add({ host, path: '/copy' });
      if (host === r.charset) add({ host, path: '/cp1251' });
      if (host === r.crossRedirect.from) add({ host, path: '/go' });
    } else {
      add({ host, path: k + 1 < n ? pagePath(k + 1) : '/' });
    }
    // The seed host carries one of each special link, so even a tiny web has them.
    if (i === 0 && k === 0) add({ host, path: '/private/notes' });
    if (i === 0 && k === 1) {
      add({ host, path: `/old/${n - 1}` });
      add({ host, path: '/missing' });
      add({ host, path: '/error' });
    }
    // Random extras.
    if (rng.chance(0.12)) add({ host, path: `/private/${words(rng, 1, 1)}-${k}` });
    if (rng.chance(0.06)) add({ host, path: `/old/${rng.int(1, n - 1)}` });
    if (rng.chance(0.04)) add({ host, path: '/missing' });
    if (rng.chance(0.03)) add({ host, path: '/error' });
    if (rng.chance(0.6)) add(this.randomElsewhere(i));
    if (targets.length < 6 && rng.chance(0.25)) add(this.randomElsewhere(i));
    while (targets.length < 3) add({ host, path: randomPage() });
    if (targets.length < 6 && rng.chance(0.5)) add({ host, path: randomPage() });
    return targets;
  }

  private randomElsewhere(i: number): Target {
    const { hosts, pagesPerHost: n } = this.options;
    let j = this.rng.int(0, hosts - 2);
    if (j >= i) j++;
    const path = this.rng.chance(0.05) ? `/old/${this.rng.int(1, n - 1)}` : pagePath(this.rng.int(0, n - 1));
    return { host: this.hostNames[j], path };
  }

  private nextCrawlable(i: number): number {
    let j = i;
    do j = (j + 1) % this.options.hosts;
    while (this.blocked.has(j));
    return j;
  }

  private buildPage(host: string, servedAt: string[], base: string | undefined, targets: Target[]): PageResource {
    const rng = this.rng;
    const title = `${capitalise(words(rng, 2, 4))} | ${host}`;
    const paragraphs = Array.from({ length: rng.int(1, 5) }, () => `${capitalise(words(rng, 15, 70))}.`);
    const docBases = servedAt.map((p) => new URL(base ?? p, this.url(host, p)));
    const links = targets.map((t) => ({ href: this.writeHref(host, t, docBases), text: words(rng, 1, 3) }));
    const html = renderPage({ title, paragraphs, links, base });
    return { kind: 'page', status: 200, contentType: HTML, body: Buffer.from(html), base, hrefs: links.map((l) => l.href) };
  }

  /**
   * How the link to `target` is written: absolute, protocol-relative, root-relative or relative
   * (`p/2`, `2`, `../p/3`, `./`), chosen at random among the forms that resolve to the target from
   * every base the page is served at (a duplicate page must link to the same URLs as its original).
   */
  private writeHref(host: string, target: Target, docBases: URL[]): string {
    const rng = this.rng;
    const absolute = this.url(target.host, target.path);
    const origin = this.origin(target.host);
    const candidates =
      target.host === host
        ? [target.path, target.path.slice(1) || './', `./${target.path.slice(1)}`, `..${target.path}`, absolute]
        : [absolute, absolute.replace(/^http:/, '')];
    if (target.path.startsWith('/p/')) candidates.push(target.path.slice(3));
    if (target.path === '/') candidates.push(origin);
    const valid = candidates.filter((href) => docBases.every((b) => new URL(href, b).href === absolute));
    let href = rng.pick(valid);
    if (rng.chance(0.05)) href += `#${words(rng, 1, 1)}`;
    return href;
  }

  private privatePage(host: string, path: string): PageResource {
    const html = renderPage({
      title: `Private | ${host}`,
      paragraphs: [`Private area ${this.url(host, path)}: robots.txt asks crawlers to keep out.`],
      links: [{ href: '/', text: 'home' }],
    });
    return { kind: 'page', status: 200, contentType: HTML, body: Buffer.from(html), hrefs: ['/'] };
  }
}

function pagePath(k: number): string {
  return k === 0 ? '/' : `/p/${k}`;
}

function charsetPage(): PageResource {
  const html = renderPage({
    title: 'Проверка кодировки',
    paragraphs: [`${RUSSIAN_TEXT}.`, 'Эта страница закодирована в windows-1251, а не в UTF-8.'],
    links: [{ href: '/', text: 'На главную' }],
    lang: 'ru',
    charset: 'windows-1251',
  });
  return {
    kind: 'page',
    status: 200,
    contentType: 'text/html; charset=windows-1251',
    body: iconv.encode(html, 'win1251'),
    hrefs: ['/'],
  };
}

function urlset(entries: string[]): SitemapResource {
  const urls = entries.map((loc, i) => `  <url><loc>${loc}</loc><priority>${(0.9 - i / 10).toFixed(1)}</priority></url>\n`);
  const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls.join('')}</urlset>\n`;
  return { kind: 'sitemap', status: 200, contentType: 'application/xml', body: Buffer.from(xml), entries, index: false };
}

function sitemapIndex(entries: string[]): SitemapResource {
  const sitemaps = entries.map((loc) => `  <sitemap><loc>${loc}</loc></sitemap>\n`);
  const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${sitemaps.join('')}</sitemapindex>\n`;
  return { kind: 'sitemap', status: 200, contentType: 'application/xml', body: Buffer.from(xml), entries, index: true };
}

function htmlReply(status: number, html: string): Reply {
  return { status, contentType: HTML, body: Buffer.from(html) };
}

function validate(o: SiteGraphOptions): void {
  const int = (name: string, value: number, min: number) => {
    if (!Number.isInteger(value) || value < min) {
      throw new RangeError(`TestWeb option ${name}=${value}: must be an integer >= ${min}`);
    }
  };
  int('hosts', o.hosts, MIN_HOSTS);
  int('pagesPerHost', o.pagesPerHost, MIN_PAGES_PER_HOST);
  int('crawlDelayHosts', o.crawlDelayHosts, 0);
  if (!Number.isFinite(o.seed)) throw new RangeError(`TestWeb option seed=${o.seed}: must be a number`);
}
