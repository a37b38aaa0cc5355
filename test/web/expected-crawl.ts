/**
 * What a correct crawler must do on the test web: a breadth-first walk from the seeds over the very
 * resources the server answers with, obeying robots.txt, following redirects and sitemaps, scope "any".
 * A crawler reads a host's robots.txt before anything else there, and learns its sitemaps from it
 * (`Sitemap:` lines, else a probe of /sitemap.xml): so the first URL of a host brings its sitemaps along.
 */
import { createHash } from 'node:crypto';
import { RUSSIAN_TEXT } from './html';
import { SiteGraph } from './site-graph';

export interface ExpectedCrawl {
  /**
   * Every URL a correct crawler (scope "any") starting from the seeds fetches exactly once: pages, 404
   * and 500 answers (a 500 is asked once with FRONTIER_TRANSIENT_ATTEMPTS=1, as test crawls run), both ends
   * of every redirect. robots.txt is not included.
   */
  reachable: Set<string>;
  /** URLs linked from reachable pages (or redirected to, or in a sitemap) that robots.txt forbids: never requested. */
  disallowed: Set<string>;
  /** The reachable URLs that are sitemaps (or probes for one): fetched once, never stored as pages. */
  sitemaps: Set<string>;
  /** Groups of reachable URLs whose bodies are byte-identical (a content store keeps one copy). */
  duplicates: string[][];
  /** Host → Crawl-delay in seconds, for hosts whose robots.txt sets one. */
  crawlDelay: Map<string, number>;
  /** A windows-1251 page whose decoded body contains `text`. */
  charsetPage: { url: string; charset: string; text: string };
  /**
   * Reachable URL → what leads to it: the reachable pages, sitemaps and redirects naming it, `robots.txt of
   * <host>` for a sitemap found there, `seed` for a seed. A URL a crawl never requested is explained by these.
   */
  via: Map<string, string[]>;
}

/** URLs as `new URL(x).href`, fragment dropped. */
export function normaliseUrl(href: string, base?: string | URL): string {
  const url = new URL(href, base);
  url.hash = '';
  return url.href;
}

/** The URL extensions each plugin of the crawler claims (what it makes a crawler follow from `<img src>`). */
const PLUGIN_EXTENSIONS: Record<string, string[]> = { png: ['png'] };

export interface ExpectedCrawlOptions {
  /** `false`: the crawl of a crawler that reads no sitemaps (SITEMAP_MODE=off). */
  sitemaps?: boolean;
  /**
   * The crawler's enabled plugins (PLUGINS): images whose extension one of them claims are followed from
   * `<img src>` too. None by default: images are never fetched.
   */
  plugins?: string[];
}

export function expectedCrawl(graph: SiteGraph, seeds: string[], options: ExpectedCrawlOptions = {}): ExpectedCrawl {
  const claimed = new Set((options.plugins ?? []).flatMap((p) => PLUGIN_EXTENSIONS[p] ?? []));
  const followsImage = (url: string) => claimed.has(new URL(url).pathname.split('.').pop()!.toLowerCase());
  const reachable = new Set<string>();
  const disallowed = new Set<string>();
  const sitemaps = new Set<string>();
  const queue: string[] = [];
  const seen = new Set<string>();
  const hostsMet = new Set<string>();
  const via = new Map<string, string[]>();
  const enqueue = (link: string, from: string) => {
    const sources = via.get(link);
    if (sources) sources.push(from);
    else via.set(link, [from]);
    if (seen.has(link)) return;
    seen.add(link);
    queue.push(link);
    const host = new URL(link).hostname;
    if (hostsMet.has(host) || options.sitemaps === false) return;
    hostsMet.add(host);
    for (const sitemap of graph.sitemapsOf(host)) {
      sitemaps.add(sitemap);
      enqueue(sitemap, `robots.txt of ${host}`);
    }
  };
  for (const s of seeds) enqueue(normaliseUrl(s), 'seed');

  for (let next = 0; next < queue.length; next++) {
    const href = queue[next];
    const url = new URL(href);
    const path = url.pathname + url.search;
    if (!graph.isAllowed(url.hostname, path)) {
      disallowed.add(href);
      continue;
    }
    reachable.add(href);
    const resource = graph.resource(url.hostname, path);
    let found: string[] = [];
    if (resource?.kind === 'redirect') {
      found = [normaliseUrl(resource.location, url)];
    } else if (resource?.kind === 'page' && resource.status === 200) {
      const base = resource.base === undefined ? url : new URL(resource.base, url);
      found = resource.hrefs.map((h) => normaliseUrl(h, base));
      // Images come after the links, as a parser collects them.
      if (claimed.size) found.push(...(resource.images ?? []).map((h) => normaliseUrl(h, base)).filter(followsImage));
    } else if (resource?.kind === 'sitemap') {
      found = resource.entries.map((h) => normaliseUrl(h));
      if (resource.index) for (const entry of found) sitemaps.add(entry);
    }
    for (const link of found) enqueue(link, href);
  }
  for (const sitemap of sitemaps) if (!reachable.has(sitemap)) sitemaps.delete(sitemap);
  for (const url of via.keys()) if (!reachable.has(url)) via.delete(url);

  const crawlDelay = new Map<string, number>();
  for (const host of graph.hostNames) {
    const delay = graph.robots(host)?.crawlDelay;
    if (delay !== undefined) crawlDelay.set(host, delay);
  }

  return {
    reachable,
    disallowed,
    sitemaps,
    duplicates: identicalBodies(graph, reachable),
    crawlDelay,
    charsetPage: { url: graph.url(graph.roles.charset, '/cp1251'), charset: 'windows-1251', text: RUSSIAN_TEXT },
    via,
  };
}

/** Groups the reachable URLs by the exact bytes the server answers with; keeps groups of two or more. */
function identicalBodies(graph: SiteGraph, reachable: Set<string>): string[][] {
  const byHash = new Map<string, string[]>();
  for (const href of reachable) {
    const url = new URL(href);
    const body = graph.reply(url.hostname, url.pathname + url.search).body;
    const hash = createHash('sha256').update(body).digest('hex');
    const group = byHash.get(hash);
    if (group) group.push(href);
    else byHash.set(hash, [href]);
  }
  return [...byHash.values()].filter((g) => g.length > 1);
}
