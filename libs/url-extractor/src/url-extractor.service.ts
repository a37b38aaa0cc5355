import { Injectable } from '@nestjs/common';
import { CrawlUrl, PageLinks } from '@crawler/contracts';
import { resolveLink } from '@crawler/url';

/** `<link rel>` values that name another page (stylesheets, icons and preloads are not pages). */
const PAGE_RELS = new Set(['canonical', 'alternate', 'next', 'prev', 'previous']);

/**
 * Raw hrefs → absolute http(s) URLs one level deeper: resolved by the WHATWG rules against `<base href>`
 * and the page, non-web schemes dropped, `rel=nofollow` and page-level nofollow obeyed, repeats removed.
 */
@Injectable()
export class UrlExtractorService {
  extract(page: PageLinks): CrawlUrl[] {
    if (page.kind === 'sitemap') return this.fromSitemap(page);
    if (page.nofollow) return [];
    const seen = new Set<string>();
    const urls: CrawlUrl[] = [];
    for (const link of page.links) {
      const rels = (link.rel ?? '').toLowerCase().split(/\s+/).filter(Boolean);
      if (rels.includes('nofollow')) continue;
      if (link.tag === 'link' && !rels.some((r) => PAGE_RELS.has(r))) continue;
      const url = resolveLink(link.href, page.url, page.baseHref);
      if (!url || seen.has(url)) continue;
      seen.add(url);
      urls.push({ url, depth: page.depth + 1, source: 'link', hops: 0 });
    }
    return urls;
  }

  /**
   * A urlset's pages are one level below the sitemap; an index's child sitemaps are sitemaps again, at the
   * index's own depth (a sitemap is not a page, so nesting costs no depth). `<priority>` travels with the
   * URL for the frontier's prioritizer. Scope is the filter's business, as for any link.
   */
  private fromSitemap(page: PageLinks): CrawlUrl[] {
    const seen = new Set<string>();
    const urls: CrawlUrl[] = [];
    for (const link of page.links) {
      const url = resolveLink(link.href, page.url);
      if (!url || seen.has(url)) continue;
      seen.add(url);
      if (link.tag === 'sitemap') urls.push({ url, kind: 'sitemap', depth: page.depth, source: 'sitemap', hops: 0 });
      else urls.push({ url, depth: page.depth + 1, source: 'sitemap', hops: 0, ...(link.priority === undefined ? {} : { priority: link.priority }) });
    }
    return urls;
  }
}
