import { resolveLink } from './link-resolver';

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
