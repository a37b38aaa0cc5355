import { decodeEntry, encodeEntry } from './frontier-entry';

describe('frontier entries', () => {
  it('round-trip, short when nothing optional is set', () => {
    const plain = { url: 'https://a.test/x', depth: 2, source: 'link' as const, hops: 0 };
    expect(encodeEntry(plain)).toBe('["https://a.test/x",2,1,0]');
    expect(decodeEntry(encodeEntry(plain))).toEqual(plain);
  });

  it('round-trip with attempts, sitemap priority and revisit state', () => {
    const full = {
      url: 'https://a.test/y',
      depth: 1,
      source: 'recrawl' as const,
      hops: 0,
      attempts: 2,
      priority: 0.8,
      revisit: { etag: '"abc"', lastModified: 'Wed, 01 Jan 2025 00:00:00 GMT', bodyHash: 'ff', intervalMs: 3600000 },
    };
    expect(decodeEntry(encodeEntry(full))).toEqual(full);
    expect(decodeEntry(encodeEntry({ ...full, attempts: undefined, priority: undefined }))).toEqual({ ...full, attempts: undefined, priority: undefined });
  });

  it('round-trip the transient failures a retried URL has had', () => {
    const retried = { url: 'https://a.test/z', depth: 1, source: 'link' as const, hops: 0, failures: 2 };
    expect(decodeEntry(encodeEntry(retried))).toEqual(retried);
  });

  it('round-trip a sitemap document', () => {
    const sitemap = { url: 'https://a.test/sitemap.xml', kind: 'sitemap' as const, depth: 0, source: 'sitemap' as const, hops: 0 };
    expect(encodeEntry(sitemap)).toBe('["https://a.test/sitemap.xml",0,3,0,0,null,null,1]');
    expect(decodeEntry(encodeEntry(sitemap))).toEqual(sitemap);
  });

  it('round-trip what a sitemap said of a page: <lastmod> and <changefreq>', () => {
    const listed = { url: 'https://a.test/p', depth: 1, source: 'sitemap' as const, hops: 0, priority: 0.5, lastmod: 1_767_225_600_000, changefreq: 'weekly' as const };
    expect(encodeEntry(listed)).toBe('["https://a.test/p",1,3,0,0,0.5,null,null,null,null,1767225600000,3]');
    expect(decodeEntry(encodeEntry(listed))).toEqual(listed);
  });

  it('round-trip the referrer a plugin-claimed URL carries', () => {
    const image = { url: 'https://a.test/logo.png', depth: 1, source: 'link' as const, hops: 0, referrer: 'https://a.test/' };
    expect(encodeEntry(image)).toBe('["https://a.test/logo.png",1,1,0,0,null,null,null,"https://a.test/"]');
    expect(decodeEntry(encodeEntry(image))).toEqual(image);
  });
});
