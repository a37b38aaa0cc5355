import { canonicalize } from './url-canonicalizer';
import { hostOf } from './url-host';

describe('hostOf', () => {
  it.each([
    'http://example.com/',
    'https://www.example.com/a/b?c=d',
    'http://site-001.test:8080/x',
    'https://example.com:443/',
    'http://example.com:80/',
    'https://example.com:80/',
    'http://example.com:08080/',
    'http://example.com:0/',
    'http://example.com./',
    'http://a..b/',
    'http://./',
    'http://127.0.0.1:3000/',
    'http://0x7f.1/',
    'http://127.1/',
    'http://2130706433/',
    'http://1a.test/',
    'http://[::1]:8080/',
    'http://Example.COM/',
    'http://xn--bcher-kva.example/',
    'http://bücher.example/',
    'http://example.com?q=1',
    'http://example.com#f',
    'http://example.com',
    'http://user:pw@example.com/',
    'http://example.com\\path/',
    'HTTP://example.com/',
    'ftp://example.com/',
    'http://a-b_c.test/',
    'http://%61.test/',
  ])('answers what URL.host answers for %s', (url) => {
    expect(hostOf(url)).toBe(new URL(url).host);
  });

  it.each(['http://example.com:99999/', 'http://a.1/', 'http:///', 'not a url'])('throws for %s, as URL does', (url) => {
    expect(() => new URL(url).host).toThrow();
    expect(() => hostOf(url)).toThrow();
  });

  it('answers as URL does for a label that is not valid punycode, which URL refuses on Node.js 20 and keeps on Node.js 24', () => {
    const outcome = (read: () => string) => {
      try {
        return read();
      } catch {
        return 'refused';
      }
    };
    expect(outcome(() => hostOf('http://xn--a.test/'))).toBe(outcome(() => new URL('http://xn--a.test/').host));
  });

  it('answers the canonical host of 2,000 generated canonical URLs', () => {
    const labels = ['a', 'www', 'site-7', 'x1', 'mail', 'cdn-03', 'q'];
    const tlds = ['test', 'com', 'co.uk', 'io', 'org'];
    for (let i = 0; i < 2000; i++) {
      const host = `${labels[i % 7]}.${labels[(i * 3) % 7]}.${tlds[i % 5]}${i % 4 === 0 ? `:${1 + ((i * 37) % 65535)}` : ''}`;
      const canonical = canonicalize(`${i % 2 ? 'https' : 'http'}://${host}/p/${i}?b=${i}&a=1`);
      if (!canonical.ok) throw new Error(`not canonical: ${host}`);
      expect(hostOf(canonical.url)).toBe(canonical.host);
    }
  });
});
