import { canonicalize, DEFAULT_STRIP_PARAMS, normalizePercentEncoding } from './url-canonicalizer';

/** The canonical URL, or the rejection reason prefixed with '!'. */
function canon(input: string, base?: string, options?: Parameters<typeof canonicalize>[2]): string {
  const r = canonicalize(input, base, options);
  return r.ok ? r.url : `!${r.reason}`;
}

describe('canonicalize', () => {
  describe('what WHATWG URL already does', () => {
    it.each([
      ['HTTP://Example.COM/a', 'http://example.com/a'],
      ['http://example.com:80/a', 'http://example.com/a'],
      ['https://example.com:443/a', 'https://example.com/a'],
      ['http://example.com', 'http://example.com/'],
      ['http://example.com/a/./b/../c', 'http://example.com/a/c'],
      ['http://example.com/a/%2e%2E/c', 'http://example.com/c'],
      ['http://bücher.example/', 'http://xn--bcher-kva.example/'],
      ['http://example.com/a b', 'http://example.com/a%20b'],
    ])('%s → %s', (input, expected) => expect(canon(input)).toBe(expected));
  });

  it('resolves against a base', () => {
    expect(canon('../x?b=1&a=2#top', 'http://example.com/d/e/f')).toBe('http://example.com/d/x?a=2&b=1');
  });

  it('keeps a non-default port and reports host[:port], and the canonical URL parsed', () => {
    const result = canonicalize('http://Site-001.test:8080/x');
    expect(result).toMatchObject({ ok: true, url: 'http://site-001.test:8080/x', host: 'site-001.test:8080' });
    expect(result.ok && result.parsed.href).toBe('http://site-001.test:8080/x');
  });

  it('drops the fragment', () => {
    expect(canon('http://example.com/a#section')).toBe('http://example.com/a');
    expect(canon('http://example.com/a?q=1#')).toBe('http://example.com/a?q=1');
  });

  it.each(['ftp://example.com/', 'mailto:a@example.com', 'javascript:alert(1)', 'file:///etc/passwd', 'data:,x'])('rejects the scheme of %s', (input) =>
    expect(canon(input)).toBe('!scheme'),
  );

  it.each(['http://user:pw@example.com/', 'http://user@example.com/', 'https://:pw@example.com/'])('rejects credentials in %s', (input) =>
    expect(canon(input)).toBe('!credentials'),
  );

  it.each(['', 'not a url', 'http://', 'http://exa mple.com/', 'http://example.com:99999/', '/relative/only'])('rejects the malformed %j', (input) =>
    expect(canon(input)).toBe('!malformed'),
  );

  it('rejects when the base itself is malformed', () => {
    expect(canon('x', 'not a base')).toBe('!malformed');
  });

  describe('percent-encoding', () => {
    it('decodes escaped unreserved characters in path and query', () => {
      expect(canon('http://example.com/%7Euser/%41%62%2D%2e%5F?%61=%7e')).toBe('http://example.com/~user/Ab-._?a=~');
    });
    it('upper-cases the hex of the escapes that stay', () => {
      expect(canon('http://example.com/a%2fb%3a?q=%c3%a9%26')).toBe('http://example.com/a%2Fb%3A?q=%C3%A9%26');
    });
    it('leaves a lone % alone (the server would see different bytes otherwise)', () => {
      expect(canon('http://example.com/100%/x?p=5%')).toBe('http://example.com/100%/x?p=5%');
    });
    it('never completes a lone % into a new escape (was: %%36%31 → %61, then → a on the next pass)', () => {
      // Found by the urlcanon conformance suite (supplemental_whatwg.json): decoding %36 and %31 next to a
      // stray % built "%61", so the result was not a fixed point and named a different resource.
      expect(canon('http://host/%%36%31')).toBe('http://host/%%361');
      expect(canon('http://host/?%%36%31')).toBe('http://host/?%%361');
      expect(canon('http://host/%6%31x')).toBe('http://host/%6%31x');
      expect(canon('http://host/%%41B')).toBe('http://host/%%41B');
      expect(canon('http://host/%%7e%41')).toBe('http://host/%~A'); // ~ is no hex digit: no escape can form
      for (const input of ['http://host/%%36%31', 'http://host/%6%31x', 'http://host/%2%34%31', 'http://host/%%%36%36']) {
        const once = canon(input);
        expect(canon(once)).toBe(once);
      }
    });
    it('normalizePercentEncoding is exported for other stages', () => {
      expect(normalizePercentEncoding('%7e%7b%zz')).toBe('~%7B%zz');
    });
  });

  describe('tracking and session parameters', () => {
    it('removes the default list case-insensitively, keeps the rest', () => {
      expect(
        canon(
          'http://example.com/p?utm_source=x&UTM_Medium=y&id=7&gclid=1&FBCLID=2&msclkid=3&dclid=4&yclid=5' +
            '&mc_cid=6&mc_eid=7&_ga=8&JSESSIONID=9&phpsessid=10&sid=11&SessionId=12&ASPSESSIONIDQQGQGRDA=13',
        ),
      ).toBe('http://example.com/p?id=7');
    });
    it('matches keys after percent-normalisation (utm%5Fsource is utm_source)', () => {
      expect(canon('http://example.com/?utm%5Fsource=x&a=1')).toBe('http://example.com/?a=1');
    });
    it('does not strip keys that only contain a listed name', () => {
      expect(canon('http://example.com/?sidebar=1&my_utm_x=2')).toBe('http://example.com/?my_utm_x=2&sidebar=1');
    });
    it('drops the ? when nothing is left', () => {
      expect(canon('http://example.com/p?utm_campaign=z')).toBe('http://example.com/p');
      expect(canon('http://example.com/p?')).toBe('http://example.com/p');
      expect(canon('http://example.com/p?&&')).toBe('http://example.com/p');
    });
    it('removes ;jsessionid= path parameters', () => {
      expect(canon('http://example.com/shop/cart;jsessionid=0A1B2C?item=3')).toBe('http://example.com/shop/cart?item=3');
      expect(canon('http://example.com/a;JSESSIONID=x/b;v=1')).toBe('http://example.com/a/b;v=1');
      expect(canon('http://example.com/a;jsessionid=x;v=1')).toBe('http://example.com/a;v=1');
    });
    it('takes a configured list instead of the default', () => {
      const options = { stripParams: [...DEFAULT_STRIP_PARAMS, 'ref', /^pk_/i] };
      expect(canon('http://example.com/?ref=hn&PK_campaign=1&utm_x=2&sid=3&q=1', undefined, options)).toBe('http://example.com/?q=1');
      expect(canon('http://example.com/?utm_x=2&sid=3', undefined, { stripParams: [] })).toBe('http://example.com/?sid=3&utm_x=2');
    });
    it('is not fooled by a global RegExp (stateful lastIndex)', () => {
      const options = { stripParams: [/^x$/g] };
      for (let i = 0; i < 3; i++) expect(canon('http://example.com/?x=1&y=2', undefined, options)).toBe('http://example.com/?y=2');
    });
  });

  describe('query order', () => {
    it('sorts parameters by key', () => {
      expect(canon('http://example.com/?b=2&a=1&c=3')).toBe('http://example.com/?a=1&b=2&c=3');
    });
    it('is stable: duplicate keys keep their relative order', () => {
      expect(canon('http://example.com/?b=1&a=z&b=0&a=y')).toBe('http://example.com/?a=z&a=y&b=1&b=0');
    });
    it('sorts by code unit, keys without a value included', () => {
      expect(canon('http://example.com/?b&B=1&a=&_=2')).toBe('http://example.com/?B=1&_=2&a=&b');
    });
  });

  it('removes the trailing dot of a fully-qualified host', () => {
    expect(canonicalize('http://example.com.:8080/')).toMatchObject({ ok: true, url: 'http://example.com:8080/', host: 'example.com:8080' });
    expect(canon('http://example.com../')).toBe('http://example.com/');
  });

  it('leaves IP hosts as WHATWG serialises them', () => {
    expect(canon('http://0x7f.1/')).toBe('http://127.0.0.1/');
    expect(canon('http://[0:0::1]:81/')).toBe('http://[::1]:81/');
  });

  it.each([
    'HTTP://Example.COM:80/a/../b/%7e%c3%a9;JSESSIONID=1?z=1&utm_source=x&a=%7a#f',
    'http://example.com./?b=2&b=1&a',
    'https://xn--bcher-kva.example/%25/%2F?q=%2B+%20',
    'http://example.com//double//slashes/',
  ])('is idempotent for %s', (input) => {
    const once = canon(input);
    expect(once.startsWith('!')).toBe(false);
    expect(canon(once)).toBe(once);
  });
});
