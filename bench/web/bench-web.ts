/**
 * The benchmark's web: many hosts of pages with 40–80 body links each (shaped like real pages and sized around a
 * median, or in the `simple` shape uniform pages of about 30 KB), robots.txt
 * on every host, and redirects, exact duplicates, missing pages and server errors in the proportions a
 * general crawl meets. Built deterministically from a seed, entirely in memory before the first request,
 * so that serving a page costs a map lookup and a socket write and the server is never what is measured.
 *
 * Every host is its own registrable domain (`site-001.test` …) on its own loopback address (127.1.x.y), as
 * sites on the real web are: per-host and per-IP politeness both apply, and a peer that groups hosts by
 * registrable domain sees them as distinct.
 *
 * Paths of a host:
 *   /robots.txt     200 (`Disallow: /private/`), or 404 on one host in twenty
 *   /, /p/1 … /p/{n-1}  pages (200, text/html)
 *   /d/N            byte-identical copy of /p/N        (an exact duplicate)
 *   /r/N            301 → /p/N                          (a redirect)
 *   /missing/N      404
 *   /err/N          500
 *   /private/N      a page robots.txt disallows (fetching it is a robots violation)
 */
import { Prng } from '../../test/web/prng';
import { realPageBytes, renderRealPage } from './real-page';

export interface BenchWebOptions {
  /** Number of hosts. @defaultValue 200 */
  hosts: number;
  /** Pages per host, the home page included. @defaultValue 500 */
  pagesPerHost: number;
  /** Port the server listens on (cross-host links are absolute, so they name it). */
  port: number;
  /** @defaultValue 1 */
  seed?: number;
  /**
   * `real`: pages shaped like real ones (bench/web/real-page.ts), sizes spread around `pageKb`; `simple`: the
   * first benchmark web's uniform pages of ~30 KB, kept to compare with earlier results. Both have the same
   * link graph. @defaultValue 'real'
   */
  shape?: BenchWebShape;
  /** Median page size of the `real` shape, KB. @defaultValue 30 */
  pageKb?: number;
}

export type BenchWebShape = 'simple' | 'real';
export const BENCH_WEB_SHAPES: readonly BenchWebShape[] = ['simple', 'real'];

export interface BenchHost {
  name: string;
  ip: string;
  robotsStatus: 200 | 404;
  robots: string;
  /** Path prefixes robots.txt disallows. */
  disallow: string[];
}

export interface BenchReply {
  status: number;
  contentType: string;
  body: Buffer;
  location?: string;
}

/** Share of a page's body links by kind; what is left are same-host pages. */
const LINK_MIX = {
  crossHost: 0.1,
  variant: 0.04, // a same-host page spelled with a fragment or a tracking parameter
  private: 0.02,
  redirect: 0.02,
  duplicate: 0.02,
  missing: 0.02,
  error: 0.005,
  nonWeb: 0.015, // mailto:, javascript:, a bare fragment
};
const NAV_LINKS = 8;
const PARAGRAPH_POOL = 2048;
const PARAGRAPHS_PER_PAGE = 50;

export class BenchWeb {
  readonly hosts: BenchHost[];
  readonly pagesPerHost: number;
  readonly shape: BenchWebShape;
  private readonly pageBytesMedian: number;
  private readonly port: number;
  /** host name → path → reply */
  private readonly sites = new Map<string, Map<string, BenchReply>>();
  private readonly byName = new Map<string, BenchHost>();
  private readonly html = 'text/html; charset=utf-8';

  constructor(options: BenchWebOptions) {
    const seed = options.seed ?? 1;
    this.pagesPerHost = options.pagesPerHost;
    this.port = options.port;
    this.shape = options.shape ?? 'real';
    this.pageBytesMedian = (options.pageKb ?? 30) * 1024;
    this.hosts = Array.from({ length: options.hosts }, (_, i) => benchHost(i, seed));
    for (const host of this.hosts) this.byName.set(host.name, host);
    const paragraphs = paragraphPool(new Prng(seed ^ 0x5bd1e995));
    for (let h = 0; h < this.hosts.length; h++) this.sites.set(this.hosts[h].name, this.buildSite(h, seed, paragraphs));
  }

  /** The home page of every host. */
  seeds(): string[] {
    return this.hosts.map((h) => `http://${h.name}:${this.port}/`);
  }

  /** hosts(5) lines: every host name on its own loopback address. */
  hostsFile(): string {
    return `${this.hosts.map((h) => `${h.ip} ${h.name}`).join('\n')}\n`;
  }

  host(name: string): BenchHost | undefined {
    return this.byName.get(name);
  }

  reply(hostName: string, path: string): BenchReply | undefined {
    return this.sites.get(hostName)?.get(path);
  }

  /** Whether the host's robots.txt disallows the path. */
  disallowed(hostName: string, path: string): boolean {
    const host = this.byName.get(hostName);
    return !!host && host.disallow.some((prefix) => path.startsWith(prefix));
  }

  /** Bytes of HTML held for pages (duplicates share their original's buffer). */
  get pageBytes(): number {
    let n = 0;
    for (const site of this.sites.values()) for (const [path, r] of site) if (!path.startsWith('/d/')) n += r.body.length;
    return n;
  }

  private buildSite(h: number, seed: number, paragraphs: Buffer[]): Map<string, BenchReply> {
    const host = this.hosts[h];
    const site = new Map<string, BenchReply>();
    const n = this.pagesPerHost;
    site.set('/robots.txt', { status: host.robotsStatus, contentType: 'text/plain', body: Buffer.from(host.robots) });
    const nav = navHtml(n);
    for (let p = 0; p < n; p++) {
      const rng = new Prng((seed * 1_000_003 + h * 65_537 + p) >>> 0);
      const body = this.page(h, p, rng, paragraphs, nav);
      site.set(p === 0 ? '/' : `/p/${p}`, { status: 200, contentType: this.html, body });
    }
    for (let p = 0; p < n; p++) {
      const original = site.get(p === 0 ? '/' : `/p/${p}`)!;
      site.set(`/d/${p}`, original);
      site.set(`/r/${p}`, { status: 301, contentType: this.html, body: Buffer.from('<!doctype html><title>Moved</title>'), location: `/p/${p}` });
      site.set(`/missing/${p}`, {
        status: 404,
        contentType: this.html,
        body: Buffer.from(`<!doctype html><title>Not found</title><p>/missing/${p} on ${host.name}</p>`),
      });
      site.set(`/err/${p}`, { status: 500, contentType: this.html, body: Buffer.from(`<!doctype html><title>Server error</title><p>/err/${p} on ${host.name}</p>`) });
      site.set(`/private/${p}`, { status: 200, contentType: this.html, body: Buffer.from(`<!doctype html><title>Private</title><p>/private/${p} on ${host.name}</p>`) });
    }
    return site;
  }

  private page(h: number, p: number, rng: Prng, paragraphs: Buffer[], nav: string): Buffer {
    const host = this.hosts[h];
    const title = `${host.name} page ${p}: ${titleWords(rng)}`;
    const links = this.bodyLinks(rng);
    if (this.shape === 'real') {
      const path = p === 0 ? '/' : `/p/${p}`;
      const otherHost = this.hosts[(h + 1 + rng.int(0, this.hosts.length - 2)) % this.hosts.length].name;
      const targetBytes = realPageBytes(rng, this.pageBytesMedian);
      return renderRealPage({ host: host.name, port: this.port, path, title, pagesPerHost: this.pagesPerHost, links, otherHost, targetBytes, rng, paragraphs });
    }
    const parts: (Buffer | string)[] = [
      `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>${title}</title>\n`,
      `<meta name="description" content="${titleWords(rng)} ${titleWords(rng)}">\n`,
      `<link rel="canonical" href="${p === 0 ? '/' : `/p/${p}`}">\n<link rel="stylesheet" href="/static/site.css">\n`,
      HEAD_ASSETS,
      `</head>\n<body>\n<header>${nav}</header>\n<main>\n<article>\n<h1>${title}</h1>\n`,
    ];
    // Links sit at the end of paragraphs, as in running text; the rest go to a list after the article.
    let next = 0;
    for (let i = 0; i < PARAGRAPHS_PER_PAGE; i++) {
      parts.push('<p>', paragraphs[rng.int(0, paragraphs.length - 1)]);
      if (next < links.length && rng.chance(0.6)) parts.push(` <a href="${links[next++]}">${titleWords(rng)}</a>.`);
      parts.push('</p>\n');
    }
    parts.push('</article>\n<aside>\n<h2>Related</h2>\n<ul>\n');
    while (next < links.length) parts.push(`<li><a href="${links[next++]}">${titleWords(rng)}</a></li>\n`);
    parts.push(`</ul>\n</aside>\n</main>\n${FOOTER}</body>\n</html>\n`);
    return Buffer.concat(parts.map((x) => (typeof x === 'string' ? Buffer.from(x) : x)));
  }

  private bodyLinks(rng: Prng): string[] {
    return mixedLinks(rng, this.pagesPerHost, (page) => `http://${this.hosts[rng.int(0, this.hosts.length - 1)].name}:${this.port}/p/${page}`);
  }
}

/**
 * A page's 40–80 body links (less the nav's), in the proportions of LINK_MIX. `crossHost(page)` spells a link
 * to page `page` of another host (drawing that host from `rng`); the other kinds are same-host paths.
 */
export function mixedLinks(rng: Prng, pagesPerHost: number, crossHost: (page: number) => string): string[] {
  const count = rng.int(40, 80) - NAV_LINKS;
  const links: string[] = [];
  for (let i = 0; i < count; i++) {
    const page = rng.int(1, pagesPerHost - 1);
    let r = rng.next();
    const pick = (share: number) => (r -= share) < 0;
    if (pick(LINK_MIX.crossHost)) links.push(crossHost(page));
    else if (pick(LINK_MIX.variant)) links.push(rng.chance(0.5) ? `/p/${page}#section-${rng.int(1, 9)}` : `/p/${page}?utm_source=bench&utm_medium=link`);
    else if (pick(LINK_MIX.private)) links.push(`/private/${page}`);
    else if (pick(LINK_MIX.redirect)) links.push(`/r/${page}`);
    else if (pick(LINK_MIX.duplicate)) links.push(`/d/${page}`);
    else if (pick(LINK_MIX.missing)) links.push(`/missing/${page}`);
    else if (pick(LINK_MIX.error)) links.push(`/err/${page}`);
    else if (pick(LINK_MIX.nonWeb)) links.push(rng.pick(['mailto:webmaster@example.test', 'javascript:void(0)', '#top']));
    else links.push(`/p/${page}`);
  }
  return links;
}

function benchHost(i: number, seed: number): BenchHost {
  const name = `site-${String(i + 1).padStart(3, '0')}.test`;
  const ip = `127.1.${Math.floor(i / 250)}.${(i % 250) + 1}`;
  const rng = new Prng((seed * 7919 + i) >>> 0);
  if (i % 20 === 19) return { name, ip, robotsStatus: 404, robots: 'Not found', disallow: [] };
  const disallow = ['/private/'];
  const lines = ['User-agent: *', 'Disallow: /private/'];
  if (rng.chance(0.3)) {
    lines.push('Disallow: /search');
    disallow.push('/search');
  }
  lines.push('', 'User-agent: BadBot', 'Disallow: /');
  return { name, ip, robotsStatus: 200, robots: `${lines.join('\n')}\n`, disallow };
}

const SYLLABLES = 'ka lo mi ne su ta ri po ve an el or us in da fe gu hi jo ku la me no pe qu ro sa ti vu wa ya ze'.split(' ');

/** A vocabulary of made-up words, then paragraphs of 60–100 of them: text that hashes like prose. */
export function paragraphPool(rng: Prng): Buffer[] {
  const vocabulary = Array.from({ length: 4000 }, () => {
    let w = '';
    for (let s = rng.int(1, 4); s > 0; s--) w += rng.pick(SYLLABLES);
    return w;
  });
  return Array.from({ length: PARAGRAPH_POOL }, () => {
    const words: string[] = [];
    for (let n = rng.int(60, 100); n > 0; n--) words.push(vocabulary[Math.floor(rng.next() ** 2 * vocabulary.length)]);
    words[0] = words[0][0].toUpperCase() + words[0].slice(1);
    return Buffer.from(`${words.join(' ')}.`);
  });
}

const TITLE_WORDS = 'alpha beta gamma delta river stone cloud maple ember north quiet swift amber cedar harbor lumen orbit prism'.split(' ');
export function titleWords(rng: Prng): string {
  return `${rng.pick(TITLE_WORDS)} ${rng.pick(TITLE_WORDS)} ${rng.pick(TITLE_WORDS)}`;
}

function navHtml(pages: number): string {
  const items = ['<li><a href="/">Home</a></li>'];
  for (let p = 1; p < NAV_LINKS && p < pages; p++) items.push(`<li><a href="/p/${p}">Section ${p}</a></li>`);
  return `<nav><ul>${items.join('')}</ul></nav>`;
}

const HEAD_ASSETS =
  '<style>\n' +
  'body{font-family:system-ui,sans-serif;margin:0;color:#222;background:#fafafa}header,footer{background:#234;color:#eee;padding:1em}\n' +
  'nav ul{list-style:none;display:flex;gap:1em;margin:0;padding:0}nav a{color:#cde}main{display:grid;grid-template-columns:3fr 1fr;gap:2em;padding:2em}\n' +
  'article p{line-height:1.6;max-width:70ch}aside ul{padding-left:1em}aside li{margin:.3em 0}h1{font-size:1.8em}h2{font-size:1.2em}\n' +
  '.muted{color:#888}.card{border:1px solid #ddd;border-radius:4px;padding:1em;background:#fff}.grid{display:grid;gap:1em}\n' +
  '</style>\n' +
  '<script>\n' +
  'window.dataLayer=window.dataLayer||[];function track(e){window.dataLayer.push({event:e,t:Date.now()})}\n' +
  "document.addEventListener('DOMContentLoaded',function(){track('view');document.querySelectorAll('a').forEach(function(a){a.addEventListener('click',function(){track('click')})})});\n" +
  '</script>\n';

const FOOTER =
  '<footer>\n<p class="muted">A page of the benchmark web. Nothing here is real; every word is made up so that pages hash apart.</p>\n' +
  '<p class="muted">Contact <a href="mailto:webmaster@example.test">the webmaster</a>. <a href="#top">Back to top</a>.</p>\n</footer>\n';
