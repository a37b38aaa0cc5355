import { ParsedPage } from '@crawler/contracts';
import { LinkResolver } from '@crawler/url';

/**
 * The links of an exact copy that lead somewhere its original's do not: its hrefs resolved against its own
 * URL (and `<base href>`) that resolve otherwise against the original's URL. Thirty hosts serving one front
 * page have thirty sets of relative links, one per host; the original's links were sent already, so only
 * these are new. The copy has the same markup as its original, so the original resolved the same hrefs
 * (under the same `<base href>`): absolute links, and every link under an absolute base, resolve alike and
 * are left out.
 */
export function linksOfCopy(page: Pick<ParsedPage, 'url' | 'baseHref' | 'links' | 'nofollow'>, originalUrl: string): ParsedPage['links'] {
  if (page.nofollow || page.links.length === 0 || originalUrl === page.url) return [];
  const own = new LinkResolver(page.url, page.baseHref);
  const original = new LinkResolver(originalUrl, page.baseHref);
  return page.links.filter((link) => {
    const target = own.resolve(link.href);
    return target !== null && target !== original.resolve(link.href);
  });
}
