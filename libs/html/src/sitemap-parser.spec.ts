import { gzipSync } from 'node:zlib';
import { parseSitemap } from './sitemap-parser';

const LIMITS = { maxBytes: 1024 * 1024, maxUrls: 1000 };

const urlset = (locs: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n` +
  locs.map((loc, i) => `  <url><loc>${loc}</loc><lastmod>2026-01-0${(i % 9) + 1}</lastmod><priority>0.${i % 10}</priority></url>\n`).join('') +
  `</urlset>\n`;

describe('parseSitemap', () => {
  it('reads a urlset with priorities and decodes XML entities', async () => {
    const xml = urlset(['http://a.test/', 'http://a.test/p?x=1&amp;y=2']);
    const parsed = await parseSitemap(Buffer.from(xml), LIMITS);
    expect(parsed).toEqual({
      format: 'urlset',
      entries: [
        { loc: 'http://a.test/', priority: 0, lastmod: Date.parse('2026-01-01T00:00:00Z') },
        { loc: 'http://a.test/p?x=1&y=2', priority: 0.1, lastmod: Date.parse('2026-01-02T00:00:00Z') },
      ],
      truncated: false,
    });
  });

  it('keeps a loc longer than a message carries cut to 8,192 characters, with its length, in XML and text', async () => {
    const long = `http://a.test/${'x'.repeat(9000)}`;
    const cut = { loc: long.slice(0, 8192), length: long.length };
    const xml = await parseSitemap(Buffer.from(urlset([long, 'http://a.test/ok'])), LIMITS);
    expect(xml.entries).toEqual([
      { ...cut, priority: 0, lastmod: Date.parse('2026-01-01T00:00:00Z') },
      { loc: 'http://a.test/ok', priority: 0.1, lastmod: Date.parse('2026-01-02T00:00:00Z') },
    ]);
    const text = await parseSitemap(Buffer.from(`${long}\nhttp://a.test/ok\n`), LIMITS);
    expect(text.entries).toEqual([cut, { loc: 'http://a.test/ok' }]);
  });

  it('reads <lastmod> (W3C datetimes) and <changefreq>, leaving out values that are not the protocol’s', async () => {
    const xml =
      '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' +
      '<url><loc>http://a.test/1</loc><lastmod>2026-05-01T10:30:00+02:00</lastmod><changefreq> Daily </changefreq></url>' +
      '<url><loc>http://a.test/2</loc><lastmod>2026-05</lastmod><changefreq>sometimes</changefreq></url>' +
      '<url><loc>http://a.test/3</loc><lastmod>yesterday</lastmod><changefreq>never</changefreq></url>' +
      '<url><loc>http://a.test/4</loc><lastmod>2026-13-45</lastmod></url>' +
      '</urlset>';
    expect((await parseSitemap(Buffer.from(xml), LIMITS)).entries).toEqual([
      { loc: 'http://a.test/1', lastmod: Date.parse('2026-05-01T08:30:00Z'), changefreq: 'daily' },
      { loc: 'http://a.test/2', lastmod: Date.parse('2026-05-01T00:00:00Z') },
      { loc: 'http://a.test/3', changefreq: 'never' },
      { loc: 'http://a.test/4' },
    ]);
  });

  it('reads a sitemap index', async () => {
    const xml =
      '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' +
      '<sitemap><loc> http://a.test/s1.xml.gz </loc></sitemap><sitemap><loc>http://a.test/s2.xml</loc><lastmod>2026</lastmod></sitemap>' +
      '</sitemapindex>';
    const parsed = await parseSitemap(Buffer.from(xml), LIMITS);
    expect(parsed.format).toBe('sitemapindex');
    expect(parsed.entries.map((e) => e.loc)).toEqual(['http://a.test/s1.xml.gz', 'http://a.test/s2.xml']);
  });

  it('inflates a gzip-compressed sitemap recognised by its magic bytes', async () => {
    const parsed = await parseSitemap(gzipSync(urlset(['http://a.test/1', 'http://a.test/2'])), LIMITS);
    expect(parsed.entries.map((e) => e.loc)).toEqual(['http://a.test/1', 'http://a.test/2']);
  });

  it('cuts a gzip bomb at maxBytes and keeps the entries before the cut', async () => {
    const locs = Array.from({ length: 20_000 }, (_, i) => `http://a.test/page/${i}`);
    const parsed = await parseSitemap(gzipSync(urlset(locs)), { maxBytes: 64 * 1024, maxUrls: 50_000 });
    expect(parsed.truncated).toBe(true);
    expect(parsed.entries.length).toBeGreaterThan(100);
    expect(parsed.entries.length).toBeLessThan(1000);
    expect(parsed.entries[0].loc).toBe('http://a.test/page/0');
  });

  it('keeps at most maxUrls entries and says so', async () => {
    const parsed = await parseSitemap(Buffer.from(urlset(['http://a.test/1', 'http://a.test/2', 'http://a.test/3'])), { ...LIMITS, maxUrls: 2 });
    expect(parsed.entries).toHaveLength(2);
    expect(parsed.truncated).toBe(true);
  });

  it('reads the text format, one URL a line', async () => {
    const parsed = await parseSitemap(Buffer.from('http://a.test/1\r\n\nnot a url\nhttps://a.test/2\n'), LIMITS);
    expect(parsed).toEqual({ format: 'text', entries: [{ loc: 'http://a.test/1' }, { loc: 'https://a.test/2' }], truncated: false });
  });

  it('ignores out-of-range priorities and namespace prefixes do not hide entries', async () => {
    const xml = '<s:urlset xmlns:s="http://www.sitemaps.org/schemas/sitemap/0.9"><s:url><s:loc>http://a.test/</s:loc><s:priority>7</s:priority></s:url></s:urlset>';
    const parsed = await parseSitemap(Buffer.from(xml), LIMITS);
    expect(parsed.entries).toEqual([{ loc: 'http://a.test/' }]);
  });

  it('answers unknown, with no entries, for HTML, garbage and corrupt gzip', async () => {
    for (const body of [
      Buffer.from('<html><body><a href="http://a.test/">x</a></body></html>'),
      Buffer.from([0x00, 0xff, 0x13, 0x37]),
      Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x01, 0x02, 0x03]),
      Buffer.alloc(0),
    ]) {
      const parsed = await parseSitemap(body, LIMITS);
      expect(parsed.format).toBe('unknown');
      expect(parsed.entries).toEqual([]);
    }
  });

  it('keeps the entries before a document that breaks off mid-way, not the cut one', async () => {
    const whole = urlset(['http://a.test/1', 'http://a.test/22']);
    const xml = whole.slice(0, whole.indexOf('http://a.test/22') + 'http://a.test/2'.length);
    const parsed = await parseSitemap(Buffer.from(xml), LIMITS);
    expect(parsed.entries.map((e) => e.loc)).toEqual(['http://a.test/1']);
  });

  it('reads a sitemap of 200,000 nested unclosed tags in time linear in its size, and the entries after them', async () => {
    // Each open tag used to cost time in the depth: a hostile 1 MB sitemap held the parser for seconds.
    const xml = `<urlset>${'<x>'.repeat(200_000)}<url><loc>http://a.test/deep</loc></url></urlset>`;
    const started = performance.now();
    const parsed = await parseSitemap(Buffer.from(xml), { maxBytes: 2_000_000, maxUrls: 10 });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(parsed.entries.map((e) => e.loc)).toEqual(['http://a.test/deep']);
  });
});
