import { PageLinks, pluginQueue, SCHEMA_VERSION } from '@crawler/contracts';
import { compilePluginClaims } from '@crawler/plugin-host';
import { UrlExtractorService } from './url-extractor.service';

const page = (over: Partial<PageLinks>): PageLinks => ({ v: 1, url: 'http://a.test/dir/page', depth: 2, nofollow: false, links: [], ...over });

describe('UrlExtractorService', () => {
  const extractor = new UrlExtractorService();

  it('resolves against the page and its <base>, one level deeper', () => {
    const links = [
      { href: 'x', tag: 'a' as const },
      { href: '/y', tag: 'a' as const },
    ];
    expect(extractor.extract(page({ links })).map((u) => [u.url, u.depth])).toEqual([
      ['http://a.test/dir/x', 3],
      ['http://a.test/y', 3],
    ]);
    expect(extractor.extract(page({ links, baseHref: 'http://b.test/base/' })).map((u) => u.url)).toEqual(['http://b.test/base/x', 'http://b.test/y']);
  });

  it('drops non-web schemes, nofollow links, non-page <link>s and repeats', () => {
    const links = [
      { href: 'javascript:void(0)', tag: 'a' as const },
      { href: 'mailto:x@a.test', tag: 'a' as const },
      { href: 'data:text/html,hi', tag: 'a' as const },
      { href: '/ad', tag: 'a' as const, rel: 'sponsored nofollow' },
      { href: '/style.css', tag: 'link' as const, rel: 'stylesheet' },
      { href: '/page/2', tag: 'link' as const, rel: 'next' },
      { href: '/frame', tag: 'iframe' as const },
      { href: '/frame', tag: 'a' as const },
    ];
    expect(extractor.extract(page({ links })).map((u) => u.url)).toEqual(['http://a.test/page/2', 'http://a.test/frame']);
  });

  it('follows nothing from a nofollow page', () => {
    expect(extractor.extract(page({ nofollow: true, links: [{ href: '/a', tag: 'a' }] }))).toEqual([]);
  });

  it('turns a urlset into pages one level down with their priority, lastmod and changefreq, and an index into sitemaps at the same depth', () => {
    const urlset = page({
      kind: 'sitemap',
      url: 'http://a.test/sitemap.xml',
      nofollow: true, // never set for a sitemap; shown not to matter
      links: [
        { href: 'http://a.test/1', tag: 'url', priority: 0.8, lastmod: 1_767_225_600_000, changefreq: 'daily' },
        { href: '/2', tag: 'url' },
        { href: 'mailto:x@a.test', tag: 'url' },
      ],
    });
    expect(extractor.extract(urlset)).toEqual([
      { url: 'http://a.test/1', depth: 3, source: 'sitemap', hops: 0, priority: 0.8, lastmod: 1_767_225_600_000, changefreq: 'daily' },
      { url: 'http://a.test/2', depth: 3, source: 'sitemap', hops: 0 },
    ]);
    const index = page({ kind: 'sitemap', url: 'http://a.test/index.xml', links: [{ href: 'http://a.test/s1.xml.gz', tag: 'sitemap' }] });
    expect(extractor.extract(index)).toEqual([{ url: 'http://a.test/s1.xml.gz', kind: 'sitemap', depth: 2, source: 'sitemap', hops: 0 }]);
  });

  it('passes a link longer than a message carries on cut, with its length, for the filter to count', () => {
    const href = `/${'x'.repeat(8191)}`; // fits, but not once resolved against the page
    const cutHref = { href: `/${'y'.repeat(8191)}`, tag: 'a' as const, length: 9000 };
    const urls = extractor.extract(page({ links: [{ href, tag: 'a' }, cutHref, { href: '/ok', tag: 'a' }] }));
    expect(urls).toEqual([
      { url: `http://a.test${href}`.slice(0, 8192), length: 8205, depth: 3, source: 'link', hops: 0 },
      { url: `http://a.test${cutHref.href}`.slice(0, 8192), length: 9000, depth: 3, source: 'link', hops: 0 },
      { url: 'http://a.test/ok', depth: 3, source: 'link', hops: 0 },
    ]);
    const sitemap = page({ kind: 'sitemap', links: [{ href: `http://a.test/${'z'.repeat(8178)}`, tag: 'url', length: 10_000 }] });
    expect(extractor.extract(sitemap)).toEqual([{ url: `http://a.test/${'z'.repeat(8178)}`, length: 10_000, depth: 3, source: 'sitemap', hops: 0 }]);
  });

  it('takes links from area, iframe, frame and page-naming <link>s', () => {
    const links = [
      { href: '/map', tag: 'area' as const },
      { href: '/frame', tag: 'iframe' as const },
      { href: '/old-frame', tag: 'frame' as const },
      { href: '/next', tag: 'link' as const, rel: 'next' },
      { href: '/style.css', tag: 'link' as const, rel: 'stylesheet' },
    ];
    expect(extractor.extract(page({ links })).map((u) => u.url)).toEqual(['http://a.test/map', 'http://a.test/frame', 'http://a.test/old-frame', 'http://a.test/next']);
  });

  describe('with plugins', () => {
    const links = [
      { href: '/logo.png', tag: 'img' as const },
      { href: '/photo.jpg', tag: 'img' as const },
      { href: '/favicon.png', tag: 'link' as const, rel: 'icon' },
      { href: '/next', tag: 'a' as const },
      { href: '/report.png', tag: 'a' as const },
      { href: '/avatars/7', tag: 'img' as const },
    ];
    const png = compilePluginClaims([
      {
        v: SCHEMA_VERSION,
        name: 'png',
        claims: { contentTypes: ['image/png'], extensions: ['png'], urlPatterns: ['/avatars/*'] },
        pageHook: false,
        queue: pluginQueue('png'),
      },
    ]);

    it('follows no <img> and no non-page <link> while no plugin claims anything', () => {
      expect(extractor.extract(page({ links })).map((u) => u.url)).toEqual(['http://a.test/next', 'http://a.test/report.png']);
      expect(extractor.extract(page({ links })).every((u) => u.referrer === undefined)).toBe(true);
    });

    it('follows the images and icons a plugin claims, by extension or path pattern, with the page as referrer', () => {
      const urls = extractor.extract(page({ links }), png);
      expect(urls.map((u) => [u.url, u.referrer])).toEqual([
        ['http://a.test/logo.png', 'http://a.test/dir/page'],
        ['http://a.test/favicon.png', 'http://a.test/dir/page'],
        ['http://a.test/next', undefined],
        ['http://a.test/report.png', 'http://a.test/dir/page'],
        ['http://a.test/avatars/7', 'http://a.test/dir/page'],
      ]);
    });

    it('gives every link its page as referrer while a plugin asks for referrers, following no asset it does not claim', () => {
      const focus = compilePluginClaims([
        { v: SCHEMA_VERSION, name: 'focus', claims: { contentTypes: [], extensions: [], urlPatterns: [] }, pageHook: true, referrers: true, queue: pluginQueue('focus') },
      ]);
      expect(extractor.extract(page({ links }), focus).map((u) => [u.url, u.referrer])).toEqual([
        ['http://a.test/next', 'http://a.test/dir/page'],
        ['http://a.test/report.png', 'http://a.test/dir/page'],
      ]);
    });

    it('gives every link its page as referrer when the caller asks (the recrawl policy hubs), with no plugin', () => {
      expect(extractor.extract(page({ links }), undefined, true).map((u) => [u.url, u.referrer])).toEqual([
        ['http://a.test/next', 'http://a.test/dir/page'],
        ['http://a.test/report.png', 'http://a.test/dir/page'],
      ]);
    });

    it('still obeys nofollow for claimed URLs', () => {
      expect(extractor.extract(page({ links, nofollow: true }), png)).toEqual([]);
    });
  });
});
