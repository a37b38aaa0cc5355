import { parseSeed, parseSeedList } from './seed-list';

describe('seeds', () => {
  it('accepts URLs and bare domains', () => {
    expect(parseSeed('http://a.test/x')).toEqual({ ok: true, url: 'http://a.test/x' });
    expect(parseSeed(' example.com ')).toEqual({ ok: true, url: 'https://example.com/' });
  });

  it('refuses what cannot be crawled, saying why', () => {
    expect(parseSeed('ftp://a.test/')).toMatchObject({ ok: false, reason: expect.stringMatching(/ftp/) });
    expect(parseSeed('http://')).toMatchObject({ ok: false });
    expect(parseSeed('not a domain')).toMatchObject({ ok: false });
    // The canonicaliser would drop it silently further on (a crawl of nothing, "complete").
    expect(parseSeed('http://user:pw@a.test/')).toMatchObject({ ok: false, reason: expect.stringMatching(/user:password@/) });
    expect(parseSeed('http://a.test:99999/')).toMatchObject({ ok: false, reason: 'not a URL or domain name' });
  });

  it('reads a list with comments and blank lines', () => {
    expect(parseSeedList('# top sites\na.test\n\nhttp://b.test/ # home\n').map((s) => s.ok && s.url)).toEqual([
      'https://a.test/',
      'http://b.test/',
    ]);
  });
});
