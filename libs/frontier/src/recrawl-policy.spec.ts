import { recrawlInterval, sitemapChangeMs } from './recrawl-policy';

const bounds = { initialMs: 1000, minMs: 100, maxMs: 8000 };

describe('recrawlInterval', () => {
  it('starts at the initial interval, whatever the page did', () => {
    expect(recrawlInterval({ changed: true, newLinks: 5 }, bounds)).toBe(1000);
  });

  it('adaptive (no count of new links): halves when the page changed, doubles when it did not', () => {
    expect(recrawlInterval({ previousMs: 1000, changed: true }, bounds)).toBe(500);
    expect(recrawlInterval({ previousMs: 1000, changed: false }, bounds)).toBe(2000);
  });

  it('hubs: halves when the page yielded new URLs, even unchanged by its hash', () => {
    expect(recrawlInterval({ previousMs: 1000, changed: true, newLinks: 3 }, bounds)).toBe(500);
    expect(recrawlInterval({ previousMs: 1000, changed: false, newLinks: 1 }, bounds)).toBe(500);
  });

  it('hubs: a page that changed without new links is a leaf, its interval doubles', () => {
    expect(recrawlInterval({ previousMs: 1000, changed: true, newLinks: 0 }, bounds)).toBe(2000);
  });

  it('stays within [min, max]', () => {
    expect(recrawlInterval({ previousMs: 150, changed: true, newLinks: 9 }, bounds)).toBe(100);
    expect(recrawlInterval({ previousMs: 6000, changed: true, newLinks: 0 }, bounds)).toBe(8000);
  });
});

describe('the first interval from a sitemap', () => {
  const NOW = Date.parse('2026-06-01T00:00:00Z');
  const HOUR = 3_600_000;

  it('takes <changefreq> as the site says it: always and never stand for the bounds', () => {
    expect(sitemapChangeMs({ changefreq: 'hourly' }, NOW)).toBe(HOUR);
    expect(sitemapChangeMs({ changefreq: 'weekly', lastmod: NOW - HOUR }, NOW)).toBe(7 * 24 * HOUR);
    const wide = { initialMs: 24 * HOUR, minMs: HOUR / 2, maxMs: 30 * 24 * HOUR };
    expect(recrawlInterval({ changed: true, sitemapMs: sitemapChangeMs({ changefreq: 'always' }, NOW) }, wide)).toBe(HOUR / 2);
    expect(recrawlInterval({ changed: true, sitemapMs: sitemapChangeMs({ changefreq: 'never' }, NOW) }, wide)).toBe(30 * 24 * HOUR);
    expect(recrawlInterval({ changed: true, sitemapMs: sitemapChangeMs({ changefreq: 'hourly' }, NOW) }, wide)).toBe(HOUR);
  });

  it('takes the age of <lastmod> without a <changefreq>, and ignores a <lastmod> in the future', () => {
    expect(sitemapChangeMs({ lastmod: NOW - 3 * HOUR }, NOW)).toBe(3 * HOUR);
    expect(sitemapChangeMs({ lastmod: NOW + HOUR }, NOW)).toBeUndefined();
    expect(sitemapChangeMs({}, NOW)).toBeUndefined();
    // Within the bounds: a page unchanged for years waits the longest interval, not years.
    expect(recrawlInterval({ changed: true, sitemapMs: sitemapChangeMs({ lastmod: NOW - 3 * 365 * 24 * HOUR }, NOW) }, bounds)).toBe(8000);
    expect(recrawlInterval({ changed: true, sitemapMs: 300 }, bounds)).toBe(300);
  });

  it('steers the first interval only: then what the crawl sees of the page decides', () => {
    expect(recrawlInterval({ previousMs: 4000, changed: true, sitemapMs: 100 }, bounds)).toBe(2000);
  });
});
