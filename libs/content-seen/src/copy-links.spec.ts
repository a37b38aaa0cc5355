import { linksOfCopy } from './copy-links';

const links = (...hrefs: string[]) => hrefs.map((href) => ({ href, tag: 'a' as const }));

describe('linksOfCopy', () => {
  it("keeps the copy's relative links when it is served on another host, and drops the absolute ones", () => {
    const page = { url: 'http://mirror.test/', links: links('/about', 'news/1', 'https://elsewhere.test/x', '//cdn.test/y'), nofollow: false };
    expect(linksOfCopy(page, 'http://origin.test/').map((l) => l.href)).toEqual(['/about', 'news/1']);
  });

  it('keeps only the path-relative links of a copy at another path of the same host', () => {
    const page = { url: 'http://site.test/b/index.html', links: links('/root', 'sibling', '../up', 'http://site.test/abs'), nofollow: false };
    // '../up' is /up from either directory.
    expect(linksOfCopy(page, 'http://site.test/a/index.html').map((l) => l.href)).toEqual(['sibling']);
  });

  it('sends nothing under an absolute <base href>, for a nofollow copy, or for the original itself', () => {
    const base = { url: 'http://mirror.test/', baseHref: 'http://origin.test/', links: links('/about', 'x'), nofollow: false };
    expect(linksOfCopy(base, 'http://origin.test/')).toEqual([]);
    expect(linksOfCopy({ url: 'http://mirror.test/', links: links('/about'), nofollow: true }, 'http://origin.test/')).toEqual([]);
    expect(linksOfCopy({ url: 'http://origin.test/', links: links('/about'), nofollow: false }, 'http://origin.test/')).toEqual([]);
  });

  it('resolves a relative <base href> against each URL, and drops links nothing can crawl', () => {
    const page = { url: 'http://mirror.test/', baseHref: '/docs/', links: links('intro', 'mailto:a@b.test', 'javascript:void(0)'), nofollow: false };
    expect(linksOfCopy(page, 'http://origin.test/').map((l) => l.href)).toEqual(['intro']);
  });
});
