import { cookieHeader, cookiesFor, defaultPath, pathMatches, StoredCookie, storableCookie } from './cookie-rules';
import { MAX_AGE_SECONDS, parseCookieDate, parseSetCookie } from './set-cookie';

const NOW = Date.UTC(2026, 0, 1);
const store = (header: string, url: string) => {
  const parsed = parseSetCookie(header, NOW);
  if (!parsed) return { refused: 'unparsed' };
  return storableCookie(parsed, new URL(url), NOW);
};
const stored = (header: string, url: string) => store(header, url) as StoredCookie;

describe('parseSetCookie', () => {
  it('reads the name, value and attributes, case-insensitively, ignoring what it does not know', () => {
    expect(parseSetCookie('sid=abc123; Path=/app; DOMAIN=.Example.COM; Secure; HttpOnly; SameSite=Lax; Foo', NOW)).toEqual({
      name: 'sid',
      value: 'abc123',
      path: '/app',
      domain: 'example.com',
      secure: true,
    });
    expect(parseSetCookie(' a = b ', NOW)).toEqual({ name: 'a', value: 'b', secure: false });
    expect(parseSetCookie('a=', NOW)).toEqual({ name: 'a', value: '', secure: false });
    expect(parseSetCookie('a=b; Path=relative', NOW)).toEqual({ name: 'a', value: 'b', secure: false });
    expect(parseSetCookie('a=b; Domain=example.com; Domain=', NOW)).toEqual({ name: 'a', value: 'b', domain: 'example.com', secure: false });
    expect(parseSetCookie('a=b; Path=/x; Path=bad', NOW)).toEqual({ name: 'a', value: 'b', secure: false });
  });

  it('sets nothing without a name, without =, with a control character, or past 4096 bytes', () => {
    expect(parseSetCookie('novalue', NOW)).toBeNull();
    expect(parseSetCookie('=b', NOW)).toBeNull();
    expect(parseSetCookie('a=b\u0001', NOW)).toBeNull();
    expect(parseSetCookie(`a=${'x'.repeat(4096)}`, NOW)).toBeNull();
    expect(parseSetCookie(`a=${'x'.repeat(4095)}`, NOW)).not.toBeNull();
  });

  it('takes Max-Age over Expires, expires at once at zero or less, and keeps no cookie more than 400 days', () => {
    expect(parseSetCookie('a=b; Expires=Wed, 09 Jun 2027 10:18:14 GMT; Max-Age=60', NOW)?.expiresAt).toBe(NOW + 60_000);
    expect(parseSetCookie('a=b; Max-Age=60; Expires=Wed, 09 Jun 2027 10:18:14 GMT', NOW)?.expiresAt).toBe(NOW + 60_000);
    expect(parseSetCookie('a=b; Expires=Wed, 09 Jun 2027 10:18:14 GMT', NOW)?.expiresAt).toBe(Date.UTC(2027, 5, 9, 10, 18, 14));
    expect(parseSetCookie('a=b; Max-Age=0', NOW)?.expiresAt).toBe(0);
    expect(parseSetCookie('a=b; Max-Age=-1', NOW)?.expiresAt).toBe(0);
    expect(parseSetCookie('a=b; Max-Age=99999999999', NOW)?.expiresAt).toBe(NOW + MAX_AGE_SECONDS * 1000);
    expect(parseSetCookie('a=b; Max-Age=soon', NOW)?.expiresAt).toBeUndefined();
  });
});

describe('parseCookieDate', () => {
  it.each([
    ['Wed, 09 Jun 2021 10:18:14 GMT', Date.UTC(2021, 5, 9, 10, 18, 14)],
    ['Sunday, 06-Nov-94 08:49:37 GMT', Date.UTC(1994, 10, 6, 8, 49, 37)],
    ['Sun Nov  6 08:49:37 1994', Date.UTC(1994, 10, 6, 8, 49, 37)],
    ['Thu, 01 Jan 1970 00:00:00 GMT', 0],
    ['06 Nov 2030 8:9:7', Date.UTC(2030, 10, 6, 8, 9, 7)],
  ])('%s', (text, at) => expect(parseCookieDate(text)).toBe(at));

  it.each(['', 'tomorrow', 'Wed, 09 Jun 2021', '31 Feb 2021 10:00:00', '09 Jun 2021 24:00:00', '09 Foo 2021 10:00:00'])('refuses %j', (text) =>
    expect(parseCookieDate(text)).toBeNull(),
  );
});

describe('storableCookie', () => {
  it('makes a cookie without Domain host-only, with the default path of the request', () => {
    expect(stored('a=b', 'http://www.example.com/docs/page.html')).toMatchObject({ domain: 'www.example.com', hostOnly: true, path: '/docs' });
    expect(stored('a=b', 'http://www.example.com/page')).toMatchObject({ path: '/' });
  });

  it('takes a Domain the host domain-matches, refuses another site, and refuses a public suffix', () => {
    expect(stored('a=b; Domain=example.com', 'http://www.example.com/')).toMatchObject({ domain: 'example.com', hostOnly: false });
    expect(store('a=b; Domain=other.com', 'http://www.example.com/')).toEqual({ refused: "its Domain other.com is not www.example.com's" });
    expect(store('a=b; Domain=ample.com', 'http://example.com/')).toEqual({ refused: expect.stringMatching(/not example.com's/) });
    expect(store('a=b; Domain=com', 'http://example.com/')).toEqual({ refused: 'its Domain com is a public suffix' });
    expect(store('a=b; Domain=co.uk', 'http://www.example.co.uk/')).toEqual({ refused: 'its Domain co.uk is a public suffix' });
    // The private section of the list: one github.io site may not set cookies for the others.
    expect(store('a=b; Domain=github.io', 'https://alice.github.io/')).toEqual({ refused: 'its Domain github.io is a public suffix' });
    // A public suffix that is the host itself: a host-only cookie.
    expect(stored('a=b; Domain=localhost', 'http://localhost:8080/')).toMatchObject({ domain: 'localhost', hostOnly: true });
    expect(stored('a=b; Domain=Bücher.example', 'http://www.xn--bcher-kva.example/')).toMatchObject({ domain: 'xn--bcher-kva.example' });
  });

  it('lets an IP address set cookies for itself only', () => {
    expect(stored('a=b; Domain=127.0.0.1', 'http://127.0.0.1:9000/')).toMatchObject({ domain: '127.0.0.1' });
    expect(store('a=b; Domain=0.0.1', 'http://127.0.0.1/')).toHaveProperty('refused');
  });

  it('refuses a Secure cookie over http', () => {
    expect(store('a=b; Secure', 'http://example.com/')).toEqual({ refused: 'it is Secure and came over http' });
    expect(stored('a=b; Secure', 'https://example.com/')).toMatchObject({ secure: true });
  });
});

describe('cookiesFor', () => {
  const jar = [
    stored('host=1', 'http://www.example.com/'),
    stored('domain=2; Domain=example.com', 'http://www.example.com/'),
    stored('deep=3; Path=/docs/api', 'http://www.example.com/'),
    stored('docs=4; Path=/docs', 'http://www.example.com/'),
    stored('secure=5; Secure', 'https://www.example.com/'),
    stored('gone=6; Max-Age=1', 'http://www.example.com/'),
  ];

  it('sends host-only cookies to their host only, domain cookies to every host under it', () => {
    expect(cookiesFor(jar, new URL('http://www.example.com/'), NOW).map((c) => c.name)).toEqual(['host', 'domain', 'gone']);
    expect(cookiesFor(jar, new URL('http://docs.example.com/'), NOW).map((c) => c.name)).toEqual(['domain']);
    expect(cookiesFor(jar, new URL('http://example.com/'), NOW).map((c) => c.name)).toEqual(['domain']);
    expect(cookiesFor(jar, new URL('http://notexample.com/'), NOW)).toEqual([]);
  });

  it('matches paths by segment, longest first, and keeps Secure to https and expired ones back', () => {
    const names = (url: string, now = NOW) => cookiesFor(jar, new URL(url), now).map((c) => c.name);
    expect(names('http://www.example.com/docs/api/v1')).toEqual(['deep', 'docs', 'host', 'domain', 'gone']);
    expect(names('http://www.example.com/docsets')).toEqual(['host', 'domain', 'gone']);
    expect(names('https://www.example.com/', NOW + 1000)).toEqual(['host', 'domain', 'secure']);
    expect(cookieHeader(cookiesFor(jar, new URL('http://www.example.com/docs'), NOW))).toBe('docs=4; host=1; domain=2; gone=6');
    expect(cookieHeader([])).toBeUndefined();
  });

  it('paths: RFC 6265 §5.1.4', () => {
    expect(pathMatches('/docs', '/docs')).toBe(true);
    expect(pathMatches('/docs/', '/docs')).toBe(true);
    expect(pathMatches('/docs/a', '/docs/')).toBe(true);
    expect(pathMatches('/docsets', '/docs')).toBe(false);
    expect(pathMatches('/', '/docs')).toBe(false);
    expect(defaultPath('/a/b/c')).toBe('/a/b');
    expect(defaultPath('/a')).toBe('/');
    expect(defaultPath('')).toBe('/');
  });
});
