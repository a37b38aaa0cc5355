import { AddressPolicy } from '@crawler/net';
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
    const ports = { ports: new PortPolicy() };
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

  it('names the scheme of a javascript:, data: or mailto: seed; a host with a port is still a host', () => {
    expect(parseSeed('javascript:alert(1)')).toMatchObject({ ok: false, reason: 'scheme javascript: is not http(s)' });
    expect(parseSeed('data:text/html,<p>hi</p>')).toMatchObject({ ok: false, reason: 'scheme data: is not http(s)' });
    expect(parseSeed('mailto:owner@a.test')).toMatchObject({ ok: false, reason: 'scheme mailto: is not http(s)' });
    expect(parseSeed('JavaScript://a.test/%0aalert(1)')).toMatchObject({ ok: false, reason: 'scheme javascript: is not http(s)' });
    expect(parseSeed('a.test:8080/x')).toEqual({ ok: true, url: 'https://a.test:8080/x' });
    expect(parseSeed('localhost:3000')).toEqual({ ok: true, url: 'https://localhost:3000/' });
    expect(parseSeed('http:a.test/x')).toEqual({ ok: true, url: 'http://a.test/x' });
  });

  it("refuses private, loopback and metadata addresses in any spelling the URL standard reads, in the resolver's words", () => {
    const addresses = { addresses: new AddressPolicy() };
    const refused = (seed: string) => {
      const parsed = parseSeed(seed, addresses);
      return parsed.ok ? `accepted ${parsed.url}` : parsed.reason;
    };
    expect(refused('http://169.254.169.254/latest/meta-data/')).toMatch(/^address 169\.254\.169\.254 is a cloud metadata endpoint, refused even with DNS_ALLOW_PRIVATE/);
    expect(refused('http://[::ffff:127.0.0.1]/')).toMatch(/^address ::ffff:7f00:1 .*is not public.*DNS_ALLOW_PRIVATE/);
    expect(refused('http://0x7f.1/')).toMatch(/^address 127\.0\.0\.1 is not public.*DNS_ALLOW_PRIVATE/);
    expect(refused('10.0.0.1')).toMatch(/^address 10\.0\.0\.1 is not public.*DNS_ALLOW_PRIVATE/);
    expect(refused('http://2130706433:8080/')).toMatch(/^address 127\.0\.0\.1 is not public/);
    expect(refused('localhost')).toMatch(/^localhost is this machine \(127\.0\.0\.1\): address 127\.0\.0\.1 is not public.*DNS_ALLOW_PRIVATE/);
    expect(refused('http://app.LOCALHOST./')).toMatch(/^app\.localhost\. is this machine/);
    expect(refused('http://93.184.215.14/')).toBe('accepted http://93.184.215.14/');
    expect(refused('a.test')).toBe('accepted https://a.test/');
    // Where the crawl may reach them, so may its seeds; metadata only when named alone.
    const open = { addresses: new AddressPolicy({ allowPrivate: true }) };
    expect(parseSeed('http://0x7f.1:8080/', open)).toEqual({ ok: true, url: 'http://127.0.0.1:8080/' });
    expect(parseSeed('localhost', open)).toEqual({ ok: true, url: 'https://localhost/' });
    expect(parseSeed('http://169.254.169.254/', open)).toMatchObject({ ok: false, reason: expect.stringMatching(/cloud metadata/) });
    const cidr = { addresses: new AddressPolicy({ allowCidrs: ['10.0.0.0/8'] }) };
    expect(parseSeed('10.0.0.1', cidr)).toEqual({ ok: true, url: 'https://10.0.0.1/' });
    expect(parseSeed('192.168.1.1', cidr)).toMatchObject({ ok: false });
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
