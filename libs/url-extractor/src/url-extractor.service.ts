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
}
