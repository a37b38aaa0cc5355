import { PortPolicy } from '@crawler/url';
import { MAX_SEEDS_PER_REQUEST, parseSeed, parseSeedList, seedRequests } from './seed-list';

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

  it('refuses a seed on a port the filter refuses, saying why', () => {
    const ports = new PortPolicy();
    expect(parseSeed('http://a.test:6379/', ports)).toEqual({
      ok: false,
      input: 'http://a.test:6379/',
      reason: expect.stringMatching(/^port 6379 is in URL_FILTER_BLOCKED_PORTS/),
    });
    expect(parseSeed('http://a.test:25/', ports)).toMatchObject({ ok: false, reason: 'port 25 is one the Fetch standard never lets HTTP reach' });
    expect(parseSeed('a.test:81', ports)).toMatchObject({ ok: false, reason: 'port 81 is not in URL_FILTER_ALLOWED_PORTS' });
    expect(parseSeed('http://a.test:8080/', ports)).toEqual({ ok: true, url: 'http://a.test:8080/' });
    expect(parseSeed('a.test', ports)).toEqual({ ok: true, url: 'https://a.test/' });
  });

  it('reads a list with comments and blank lines', () => {
    expect(parseSeedList('# top sites\na.test\n\nhttp://b.test/ # home\n').map((s) => s.ok && s.url)).toEqual(['https://a.test/', 'http://b.test/']);
  });

  it('splits a seed list into request bodies within the byte limit and the per-request count, in order', () => {
    const urls = Array.from({ length: 5000 }, (_, i) => `https://site-${i}.example/`);
    const requests = seedRequests(urls, 16 * 1024);
    expect(requests.flat()).toEqual(urls);
    for (const r of requests) expect(Buffer.byteLength(JSON.stringify({ urls: r }))).toBeLessThanOrEqual(16 * 1024);
    // Full requests: the next URL would not have fitted.
    expect(Buffer.byteLength(JSON.stringify({ urls: [...requests[0], requests[1][0]] }))).toBeGreaterThan(16 * 1024);
    expect(seedRequests(Array(MAX_SEEDS_PER_REQUEST + 1).fill('a'), 1 << 30).map((r) => r.length)).toEqual([MAX_SEEDS_PER_REQUEST, 1]);
    expect(seedRequests([], 1024)).toEqual([]);
    expect(() => seedRequests([`https://a.test/${'x'.repeat(2000)}`], 1024)).toThrow(/does not fit/);
  });
});
