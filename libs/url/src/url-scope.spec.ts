import { inScope, matchesDomain, normalizeDomain, registrableDomain, scopeKey } from './url-scope';

describe('registrableDomain', () => {
  it.each([
    ['www.example.com', 'example.com'],
    ['a.b.example.co.uk', 'example.co.uk'],
    ['WWW.Example.COM', 'example.com'],
    ['example.com.', 'example.com'],
    // private PSL section: each user's site is its own registrable domain
    ['alice.github.io', 'alice.github.io'],
    ['x.alice.github.io', 'alice.github.io'],
    // unknown TLD: the PSL default rule makes it a one-label suffix (the local test web)
    ['site-001.test', 'site-001.test'],
    ['a.b.site-001.test', 'site-001.test'],
    // no registrable domain: the hostname itself
    ['127.0.0.1', '127.0.0.1'],
    ['[::1]', '[::1]'],
    ['localhost', 'localhost'],
    ['co.uk', 'co.uk'],
  ])('%s → %s', (host, expected) => expect(registrableDomain(host)).toBe(expected));
});

describe('scopeKey', () => {
  const url = 'http://blog.example.co.uk:8080/post';
  it('is the hostname (without port) for host scope', () => {
    expect(scopeKey(url, 'host')).toBe('blog.example.co.uk');
    expect(scopeKey(new URL(url), 'host')).toBe('blog.example.co.uk');
  });
  it('is the registrable domain for domain scope', () => expect(scopeKey(url, 'domain')).toBe('example.co.uk'));
  it('is the hostname for allowlist (matched against the list, never registered)', () => expect(scopeKey(url, 'allowlist')).toBe('blog.example.co.uk'));
  it('is null for any', () => expect(scopeKey(url, 'any')).toBeNull());
  it('throws a clear error on an invalid URL', () => {
    expect(() => scopeKey('nope', 'host')).toThrow(/scopeKey: not a valid URL: nope/);
  });
});

describe('inScope', () => {
  const seeds = new Set([scopeKey('http://site-001.test/', 'domain'), scopeKey('http://www.example.com/', 'host')]);
  const allowed = (k: string) => seeds.has(k);

  it('accepts subdomains of a seed domain', () => {
    expect(inScope('http://a.b.site-001.test:8080/x', 'domain', allowed)).toBe(true);
    expect(inScope('http://site-002.test/', 'domain', allowed)).toBe(false);
  });
  it('host scope requires the exact hostname', () => {
    expect(inScope('https://www.example.com/x', 'host', allowed)).toBe(true);
    expect(inScope('https://example.com/x', 'host', allowed)).toBe(false);
  });
  it('allowlist asks about the hostname', () => {
    const list = new Set(['example.com']);
    expect(inScope('https://www.example.com/x', 'allowlist', (host) => matchesDomain(host, list))).toBe(true);
    expect(inScope('https://example.org/x', 'allowlist', (host) => matchesDomain(host, list))).toBe(false);
  });
  it('any accepts every valid URL and never consults the keys', () => {
    expect(inScope('http://anything.example/', 'any', () => false)).toBe(true);
  });
  it('an invalid URL is never in scope', () => {
    expect(inScope('::', 'any', () => true)).toBe(false);
    expect(inScope('::', 'domain', () => true)).toBe(false);
  });
});

describe('normalizeDomain', () => {
  it.each([
    ['example.com', 'example.com'],
    ['  Example.COM.  ', 'example.com'],
    ['*.example.com', 'example.com'],
    ['.example.com', 'example.com'],
    ['bücher.example', 'xn--bcher-kva.example'],
    ['127.0.0.1', '127.0.0.1'],
  ])('%j → %s', (text, expected) => expect(normalizeDomain(text)).toBe(expected));

  it.each(['', '.', 'http://example.com/', 'example.com/path', 'example.com:8080', 'a b.com', 'a..b', 'user@example.com', 'ex*ample.com'])('refuses %j', (text) =>
    expect(normalizeDomain(text)).toBeNull(),
  );
});

describe('matchesDomain', () => {
  const domains = new Set(['a.test', 'example.co.uk', '10.0.0.1']);
  it.each([
    ['a.test', true],
    ['www.a.test', true],
    ['x.y.a.test', true],
    ['A.TEST.', true],
    ['xa.test', false],
    ['a.test.evil.test', false],
    ['test', false],
    ['shop.example.co.uk', true],
    ['co.uk', false],
    ['10.0.0.1', true],
    ['0.0.1', false],
    ['20.0.0.1', false],
  ])('%s → %s', (host, expected) => expect(matchesDomain(host, domains)).toBe(expected));

  it('matches nothing against an empty list', () => expect(matchesDomain('a.test', new Set())).toBe(false));
  it('an IP address matches only itself', () => expect(matchesDomain('192.168.0.1', new Set(['0.1', '168.0.1']))).toBe(false));
});
