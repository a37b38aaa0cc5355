import { LinkResolver, resolveLink } from './link-resolver';

const page = 'http://example.com/dir/page.html?x=1';

describe('resolveLink', () => {
  it.each([
    ['other.html', 'http://example.com/dir/other.html'],
    ['../up', 'http://example.com/up'],
    ['/root', 'http://example.com/root'],
    ['?y=2', 'http://example.com/dir/page.html?y=2'],
    ['#frag', 'http://example.com/dir/page.html?x=1#frag'],
    ['//cdn.example.net/a', 'http://cdn.example.net/a'],
    ['https://Other.example/', 'https://other.example/'],
    ['http:relative', 'http://example.com/dir/relative'], // WHATWG: same special scheme → relative
  ])('%s → %s', (href, expected) => expect(resolveLink(href, page)).toBe(expected));

  it('trims HTML whitespace and ignores tabs/newlines inside, as browsers do', () => {
    expect(resolveLink('  \n\tother.html \r\n', page)).toBe('http://example.com/dir/other.html');
    expect(resolveLink('oth\ner.h\ttml', page)).toBe('http://example.com/dir/other.html');
  });

  it.each([
    'javascript:void(0)',
    ' JavaScript:alert(1)',
    'mailto:someone@example.com',
    'tel:+15551234',
    'data:text/html,<p>hi</p>',
    'ftp://ftp.example.com/file',
    'about:blank',
    'blob:http://example.com/uuid',
    'file:///etc/passwd',
    'ws://example.com/socket',
    'urn:isbn:0451450523',
  ])('drops %s', (href) => expect(resolveLink(href, page)).toBeNull());

  it('returns null for an empty href (a link to the page itself)', () => {
    expect(resolveLink('', page)).toBeNull();
    expect(resolveLink(' \t\n', page)).toBeNull();
  });

  it('returns null for unparseable input', () => {
    expect(resolveLink('http://exa mple.com/', page)).toBeNull();
    expect(resolveLink('http://[::1/', page)).toBeNull();
    expect(resolveLink('x', 'not a url')).toBeNull();
  });

  describe('<base href>', () => {
    it('resolves the base against the page, then the href against the base', () => {
      expect(resolveLink('c.html', page, '/base/')).toBe('http://example.com/base/c.html');
      expect(resolveLink('c.html', page, 'https://static.example.org/x/y')).toBe('https://static.example.org/x/c.html');
      expect(resolveLink('c.html', page, ' sub/ ')).toBe('http://example.com/dir/sub/c.html');
    });
    it('falls back to the page URL when the base is empty or invalid', () => {
      expect(resolveLink('c.html', page, '')).toBe('http://example.com/dir/c.html');
      expect(resolveLink('c.html', page, 'http://[bad')).toBe('http://example.com/dir/c.html');
    });
    it('uses a non-http base like a browser, so its links are dropped', () => {
      expect(resolveLink('c.html', page, 'ftp://files.example/')).toBeNull();
      expect(resolveLink('c.html', page, 'javascript:x')).toBeNull();
      expect(resolveLink('https://abs.example/', page, 'ftp://files.example/')).toBe('https://abs.example/');
    });
  });
});

describe('LinkResolver', () => {
  const bases = ['http://example.com/dir/page.html?x=1', 'https://Example.COM:443/a/', 'http://example.com:8080/', 'http://[::1]:3000/x', 'http://user:pw@example.com/'];

  it('joins plain root-relative paths exactly as WHATWG resolves them, and hands everything else to the parser', () => {
    const hrefs = [
      '/p/1',
      '/p/1#s',
      '/p/1?utm_source=x&b=2',
      '/',
      '/a/b/',
      "/a'b",
      "/a?q='x'",
      '/a/./b',
      '/a/../b',
      '/a/.',
      '/..',
      '/.a/..b/...',
      '/a//b',
      '//host/x',
      '/ok',
      '/\\\\x',
      '/%2e%2e/x',
      '/a b',
      '/a"b',
      '/a<b',
      '/é',
      '/a#b#c',
      '/a?b?c',
      '/@:!$&()*+,;=-._~',
      '/a|b',
      '/a^b',
    ];
    for (const page of bases) {
      const resolver = new LinkResolver(page);
      // Each also spelled absolute, on the page's origin as WHATWG serialises it, and in other spellings of it.
      const origin = new URL(page).origin;
      const spellings = [origin, origin.toUpperCase(), `${origin}:80`, `${origin}.`, 'http://user:pw@example.com', 'http://example.com:8080', 'https://example.com'];
      for (const href of [...hrefs, ...spellings.flatMap((o) => hrefs.map((h) => o + h)), origin, `${origin}?q`, `${origin}#f`]) {
        const parsed = URL.canParse(href, page) ? new URL(href, page) : null;
        const expected = parsed && (parsed.protocol === 'http:' || parsed.protocol === 'https:') ? parsed.href : null;
        expect([page, href, resolver.resolve(href)]).toEqual([page, href, expected]);
      }
    }
  });

  it('agrees with WHATWG on random hrefs, root-relative and absolute', () => {
    const alphabet = ['/', 'a', 'B', '.', '..', '?', '#', '%', '2e', ' ', '\\\\', ':', '@', '=', '&', '~', "'", '"', 'é', '//'];
    let seed = 7;
    const next = () => ((seed = (seed * 48271) % 2147483647), seed / 2147483647);
    const resolver = new LinkResolver(bases[0], '/base/');
    for (let n = 0; n < 5000; n++) {
      let href = next() < 0.5 ? '/' : 'http://example.com/';
      for (let i = Math.floor(next() * 8); i > 0; i--) href += alphabet[Math.floor(next() * alphabet.length)];
      let expected: string | null = null;
      try {
        const parsed = new URL(href, new URL('/base/', bases[0]));
        if (parsed.protocol.startsWith('http')) expected = parsed.href;
      } catch {
        // not a URL: nothing to crawl
      }
      expect([href, resolver.resolve(href)]).toEqual([href, expected]);
    }
  });
});
