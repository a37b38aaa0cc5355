import { productToken } from './product-token';
import { robotsCacheKey, robotsUrlFor } from './robots-url';

describe('robotsUrlFor', () => {
  it.each([
    ['http://site-001.test:8080/a/b?c#d', 'http://site-001.test:8080/robots.txt'],
    ['https://Example.com:443/x', 'https://example.com/robots.txt'],
    ['http://user:pw@example.com/', 'http://example.com/robots.txt'],
    ['http://[::1]:81/', 'http://[::1]:81/robots.txt'],
  ])('%s → %s', (page, expected) => expect(robotsUrlFor(page)).toBe(expected));

  it('throws on invalid or non-http URLs', () => {
    expect(() => robotsUrlFor('nope')).toThrow(/robotsUrlFor: not a valid URL/);
    expect(() => robotsUrlFor('ftp://example.com/')).toThrow(/http\(s\) URLs only/);
  });
});

describe('robotsCacheKey', () => {
  it.each([
    ['http://site-001.test:8080/x', 'http_site-001.test_8080'],
    ['http://site-001.test/x', 'http_site-001.test_80'],
    ['http://site-001.test:80/y', 'http_site-001.test_80'],
    ['https://example.com/', 'https_example.com_443'],
    ['http://[::1]:8080/', 'http_[--1]_8080'],
  ])('%s → %s', (page, expected) => {
    expect(robotsCacheKey(page)).toBe(expected);
    expect(robotsCacheKey(page)).not.toContain(':');
  });

  it('separates schemes and ports', () => {
    const keys = ['http://a.test/', 'https://a.test/', 'http://a.test:8080/'].map(robotsCacheKey);
    expect(new Set(keys).size).toBe(3);
  });
});

describe('productToken', () => {
  it.each([
    ['PoliteCrawler/0.1 (+https://example.org/bot)', 'PoliteCrawler'],
    ['PoliteCrawler', 'PoliteCrawler'],
    ['  FooBot/2.1', 'FooBot'],
    ['FooBot (+http://x)', 'FooBot'],
    ['', ''],
  ])('%j → %j', (ua, expected) => expect(productToken(ua)).toBe(expected));
});
