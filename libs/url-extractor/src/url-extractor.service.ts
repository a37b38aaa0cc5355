import { Injectable } from '@nestjs/common';
import { CrawlUrl, MAX_URL_CHARS, PageLinks, RawLink } from '@crawler/contracts';
import { compilePluginClaims, PluginClaims } from '@crawler/plugin-host';
import { LinkResolver } from '@crawler/url';

/** `<link rel>` values that name another page (stylesheets, icons and preloads are not pages). */
const PAGE_RELS = new Set(['canonical', 'alternate', 'next', 'prev', 'previous']);
const NO_PLUGINS = compilePluginClaims([]);
/** The rels of a link without any (most links): shared, not a new array a link. */
const NO_RELS: readonly string[] = [];

/**
 * Raw hrefs → absolute http(s) URLs one level deeper: resolved by the WHATWG rules against `<base href>`
 * and the page, non-web schemes dropped, `rel=nofollow` and page-level nofollow obeyed, repeats removed.
 * A link longer than a message carries (its href, or the URL it resolves to) goes on cut, with its
 * `length`, for the URL filter to count as too-long.
 *
 * Plugins: an `<img src>` or a non-page `<link>` (an icon…) is followed only when an enabled plugin claims
 * its URL (`claims`), and a claimed URL carries the page as its `referrer` (every link does while a plugin
 * asks for referrers, e.g. a prioritizer learning where links lead). With no plugin the result is
 * exactly the core's. `referrers` asks for every link's referrer without a plugin (the recrawl policy
 * `hubs` counts each page's new links by it).
 */
@Injectable()
export class UrlExtractorService {
  extract(page: PageLinks, claims: PluginClaims = NO_PLUGINS, referrers = false): CrawlUrl[] {
    if (page.kind === 'sitemap') return this.fromSitemap(page);
    if (page.nofollow) return [];
    const seen = new Set<string>();
    const urls: CrawlUrl[] = [];
    const resolver = new LinkResolver(page.url, page.baseHref);
    for (const link of page.links) {
      const rels = link.rel ? link.rel.toLowerCase().split(/\s+/).filter(Boolean) : NO_RELS;
      if (rels.includes('nofollow')) continue;
      const asset = link.tag === 'img' || (link.tag === 'link' && !rels.some((r) => PAGE_RELS.has(r)));
      if (asset && claims.fetchesNothing) continue;
      const url = resolver.resolve(link.href);
      if (!url || seen.has(url)) continue;
      const claimed = claims.fetchesNothing ? undefined : claims.claimsUrl(url);
      if (asset && !claimed) continue;
      seen.add(url);
      const referred = claimed !== undefined || claims.referrers || referrers;
      const entry: CrawlUrl = { ...carried(url, link), depth: page.depth + 1, source: 'link', hops: 0 };
      if (referred) entry.referrer = page.url;
      urls.push(entry);
    }
    return urls;
  }

  /**
   * A urlset's pages are one level below the sitemap; an index's child sitemaps are sitemaps again, at the
   * index's own depth (a sitemap is not a page, so nesting costs no depth). `<priority>` travels with the
   * URL for the frontier's prioritizer, `<lastmod>` and `<changefreq>` for its first recrawl interval. Scope
   * is the filter's business, as for any link.
   */
  private fromSitemap(page: PageLinks): CrawlUrl[] {
    const seen = new Set<string>();
    const urls: CrawlUrl[] = [];
    const resolver = new LinkResolver(page.url);
    for (const link of page.links) {
      const url = resolver.resolve(link.href);
      if (!url || seen.has(url)) continue;
      seen.add(url);
      if (link.tag === 'sitemap') urls.push({ ...carried(url, link), kind: 'sitemap', depth: page.depth, source: 'sitemap', hops: 0 });
      else urls.push({ ...carried(url, link), depth: page.depth + 1, source: 'sitemap', hops: 0, ...listed(link) });
    }
    return urls;
  }
}

/** What a sitemap said of a page besides where it is. */
function listed(link: RawLink): Pick<CrawlUrl, 'priority' | 'lastmod' | 'changefreq'> {
  return {
    ...(link.priority === undefined ? {} : { priority: link.priority }),
    ...(link.lastmod === undefined ? {} : { lastmod: link.lastmod }),
    ...(link.changefreq === undefined ? {} : { changefreq: link.changefreq }),
  };
}

/**
 * The URL as a message carries it: whole, or, when it or its href is longer than MAX_URL_CHARS, cut to
 * that with the longer of the two lengths.
 */
function carried(url: string, link: RawLink): Pick<CrawlUrl, 'url' | 'length'> {
  const length = Math.max(url.length, link.length ?? 0);
  return length > MAX_URL_CHARS ? { url: url.slice(0, MAX_URL_CHARS), length } : { url };
}
