import { DEFAULT_ROBOTS_MAX_BYTES, RobotsPolicy } from './robots-policy';

const UA = 'PoliteCrawler/0.1 (+https://example.org/bot)';
const ROBOTS = 'http://site-001.test:8080/robots.txt';
const at = (path: string) => `http://site-001.test:8080${path}`;
const parsed = (body: string, ua = UA) => RobotsPolicy.fromResponse(200, body, ROBOTS, ua);

describe('RobotsPolicy status outcomes (RFC 9309 §2.3.1)', () => {
  it('2xx parses the body', () => {
    const p = RobotsPolicy.fromResponse(200, 'User-agent: *\nDisallow: /private', ROBOTS, UA);
    expect([p.kind, p.outcome]).toEqual(['parsed', 'fetched']);
    expect(p.isAllowed(at('/private/x'))).toBe(false);
    expect(p.isAllowed(at('/public'))).toBe(true);
  });

  it('2xx with an empty or missing body allows everything', () => {
    expect(RobotsPolicy.fromResponse(204, null, ROBOTS, UA).isAllowed(at('/x'))).toBe(true);
    expect(parsed('').isAllowed(at('/x'))).toBe(true);
  });

  it.each([400, 401, 403, 404, 410, 451, 499])('%i → allow all', (status) => {
    const p = RobotsPolicy.fromResponse(status, 'User-agent: *\nDisallow: /', ROBOTS, UA);
    expect([p.kind, p.outcome]).toEqual(['allow-all', 'unavailable']);
    expect(p.isAllowed(at('/anything'))).toBe(true);
  });

  it('3xx (redirect limit exhausted) → unavailable → allow all (§2.3.1.2)', () => {
    expect(RobotsPolicy.fromResponse(301, null, ROBOTS, UA).kind).toBe('allow-all');
  });

  it.each([500, 502, 503, 504, 429, 600, 100])('%i → disallow all (unreachable)', (status) => {
    const p = RobotsPolicy.fromResponse(status, 'User-agent: *\nAllow: /', ROBOTS, UA);
    expect([p.kind, p.outcome]).toEqual(['disallow-all', 'unreachable']);
    expect(p.isAllowed(at('/anything'))).toBe(false);
  });

  it('unreachable() (network error) → disallow all', () => {
    const p = RobotsPolicy.unreachable();
    expect([p.kind, p.outcome, p.status]).toEqual(['disallow-all', 'unreachable', null]);
    expect(p.isAllowed(at('/'))).toBe(false);
    expect(p.crawlDelayMs()).toBeUndefined();
    expect(p.sitemaps()).toEqual([]);
  });

  it('/robots.txt itself is always allowed (§2.2.2)', () => {
    expect(parsed('User-agent: *\nDisallow: /').isAllowed(at('/robots.txt'))).toBe(true);
    expect(RobotsPolicy.unreachable().isAllowed(at('/robots.txt'))).toBe(true);
  });

  it('rejects configuration errors loudly', () => {
    expect(() => RobotsPolicy.fromResponse(200, '', ROBOTS, '  ')).toThrow(/no product token/);
    expect(() => RobotsPolicy.fromResponse(200, '', 'robots.txt', UA)).toThrow(/not a valid robots.txt URL/);
    expect(() => RobotsPolicy.fromResponse(200.5, '', ROBOTS, UA)).toThrow(/status/);
    expect(() => RobotsPolicy.fromResponse(200, '', ROBOTS, UA, { maxBytes: 0 })).toThrow(/maxBytes/);
  });
});

describe('RobotsPolicy matching', () => {
  it('longest match wins; Allow wins a tie', () => {
    const p = parsed('User-agent: *\nDisallow: /shop\nAllow: /shop/public\nDisallow: /shop/public/secret\nAllow: /tie\nDisallow: /tie');
    expect(p.isAllowed(at('/shop/cart'))).toBe(false);
    expect(p.isAllowed(at('/shop/public/a'))).toBe(true);
    expect(p.isAllowed(at('/shop/public/secret/b'))).toBe(false);
    expect(p.isAllowed(at('/tie'))).toBe(true);
  });

  it('* matches any run of characters, $ anchors the end', () => {
    const p = parsed('User-agent: *\nDisallow: /*.pdf$\nDisallow: /*/drafts/\nAllow: /*.pdf$x');
    expect(p.isAllowed(at('/docs/a.pdf'))).toBe(false);
    expect(p.isAllowed(at('/docs/a.pdf?download=1'))).toBe(true);
    expect(p.isAllowed(at('/docs/a.pdfx'))).toBe(true);
    expect(p.isAllowed(at('/team/drafts/x'))).toBe(false);
    expect(p.isAllowed(at('/drafts/x'))).toBe(true);
  });

  it('matches the query string too, and paths case-sensitively', () => {
    const p = parsed('User-agent: *\nDisallow: /search?q=\nDisallow: /Admin');
    expect(p.isAllowed(at('/search?q=x'))).toBe(false);
    expect(p.isAllowed(at('/search'))).toBe(true);
    expect(p.isAllowed(at('/admin'))).toBe(true);
    expect(p.isAllowed(at('/Admin'))).toBe(false);
  });

  it('matches our product token case-insensitively and prefers our group over *', () => {
    const body = 'User-agent: *\nDisallow: /\n\nUser-agent: POLITECRAWLER\nDisallow: /private\n';
    expect(parsed(body).isAllowed(at('/page'))).toBe(true);
    expect(parsed(body).isAllowed(at('/private'))).toBe(false);
    expect(parsed(body, 'OtherBot/2.0').isAllowed(at('/page'))).toBe(false);
  });

  it('compares percent-normalised paths (RFC 9309 §2.2.2), so canonical URLs meet encoded rules', () => {
    const p = parsed('User-agent: *\nDisallow: /%7euser/\nDisallow: /a%2fb\nDisallow: /caf%C3%A9');
    expect(p.isAllowed(at('/~user/x'))).toBe(false); // the canonical form of /%7Euser/x
    expect(p.isAllowed(at('/%7Euser/x'))).toBe(false);
    expect(p.isAllowed(at('/a%2Fb'))).toBe(false); // %2F is reserved: stays encoded on both sides
    expect(p.isAllowed(at('/a/b'))).toBe(true);
    expect(p.isAllowed(at('/café'))).toBe(false);
    expect(p.toJSON().body).toContain('/%7euser/'); // the stored body is what the site served
  });

  it('ignores a version in the robots.txt user-agent line', () => {
    expect(parsed('User-agent: politecrawler/9\nDisallow: /').isAllowed(at('/x'))).toBe(false);
  });

  it('ignores a leading UTF-8 BOM', () => {
    expect(parsed('\uFEFFUser-agent: *\nDisallow: /').isAllowed(at('/x'))).toBe(false);
  });

  it('answers true for another origin (robots-parser has no answer); appliesTo tells', () => {
    const p = parsed('User-agent: *\nDisallow: /');
    expect(p.isAllowed('http://site-001.test/x')).toBe(true);
    expect(p.appliesTo('http://site-001.test/x')).toBe(false);
    expect(p.appliesTo('http://SITE-001.test:8080/y')).toBe(true);
    expect(RobotsPolicy.unreachable().appliesTo(at('/'))).toBe(false);
  });
});

describe('RobotsPolicy crawl-delay and sitemaps', () => {
  it('returns our group’s Crawl-delay in ms', () => {
    expect(parsed('User-agent: *\nCrawl-delay: 2').crawlDelayMs()).toBe(2000);
    expect(parsed('User-agent: PoliteCrawler\nCrawl-delay: 0.5\nUser-agent: *\nCrawl-delay: 9').crawlDelayMs()).toBe(500);
    expect(parsed('User-agent: other\nCrawl-delay: 9').crawlDelayMs()).toBeUndefined();
  });

  it.each(['-1', 'soon', 'Infinity', ''])('is undefined for an unusable value %j (0 for empty)', (value) => {
    const got = parsed(`User-agent: *\nCrawl-delay: ${value}`).crawlDelayMs();
    // robots-parser reads an empty value as Number('') = 0: harmless, the frontier's minimum applies.
    expect(got).toBe(value === '' ? 0 : undefined);
  });

  it('is undefined for blanket policies', () => {
    expect(RobotsPolicy.fromResponse(404, null, ROBOTS, UA).crawlDelayMs()).toBeUndefined();
  });

  it('lists sitemaps resolved, http(s) only, without duplicates', () => {
    const p = parsed(
      'Sitemap: http://site-001.test:8080/sitemap.xml\nUser-agent: *\nDisallow:\n' +
        'sitemap: /news.xml\nSitemap: http://site-001.test:8080/sitemap.xml\nSitemap: ftp://x/y.xml\nSitemap: http://[bad\n',
    );
    expect(p.sitemaps()).toEqual(['http://site-001.test:8080/sitemap.xml', 'http://site-001.test:8080/news.xml']);
  });
});

describe('RobotsPolicy truncation at maxBytes', () => {
  it('defaults to 500 KiB', () => expect(DEFAULT_ROBOTS_MAX_BYTES).toBe(512_000));

  it('ignores rules beyond maxBytes', () => {
    const filler = `# ${'x'.repeat(98)}\n`; // 101 bytes a line
    const body = `User-agent: *\n${filler.repeat(5_100)}Disallow: /late\n`; // the rule starts after 515 KB
    const p = parsed(body);
    expect(p.truncated).toBe(true);
    expect(p.isAllowed(at('/late'))).toBe(true);
    expect(RobotsPolicy.fromResponse(200, body, ROBOTS, UA, { maxBytes: 1_000_000 }).isAllowed(at('/late'))).toBe(false);
  });

  it('drops a line cut in the middle rather than keep a broader rule', () => {
    const body = 'User-agent: *\nDisallow: /\nAllow: /public-only\n';
    const cut = body.indexOf('/public-only') + 1; // a naive cut would leave "Allow: /"
    const p = RobotsPolicy.fromResponse(200, body, ROBOTS, UA, { maxBytes: cut });
    expect(p.truncated).toBe(true);
    expect(p.isAllowed(at('/secret'))).toBe(false);
    expect(p.toJSON().body).toBe('User-agent: *\nDisallow: /\n');
  });

  it('keeps a line that ends exactly at the limit', () => {
    const body = 'User-agent: *\nDisallow: /a\nDisallow: /b\n';
    const p = RobotsPolicy.fromResponse(200, body, ROBOTS, UA, { maxBytes: body.indexOf('\nDisallow: /b') });
    expect(p.isAllowed(at('/a'))).toBe(false);
    expect(p.isAllowed(at('/b'))).toBe(true);
  });

  it('counts bytes, not characters', () => {
    const body = `User-agent: *\n# ${'é'.repeat(20)}\nDisallow: /x\n`; // é is 2 bytes
    const bytes = Buffer.byteLength(body);
    // body.length (characters) would hold the whole file; in bytes it ends inside the Disallow line.
    expect(RobotsPolicy.fromResponse(200, body, ROBOTS, UA, { maxBytes: body.length }).isAllowed(at('/x'))).toBe(true);
    expect(RobotsPolicy.fromResponse(200, body, ROBOTS, UA, { maxBytes: bytes }).isAllowed(at('/x'))).toBe(false);
  });
});

describe('RobotsPolicy toJSON / fromJSON', () => {
  it('round-trips every kind through JSON text', () => {
    const policies = [
      RobotsPolicy.fromResponse(200, 'User-agent: *\nDisallow: /p\nCrawl-delay: 3\nSitemap: /s.xml', ROBOTS, UA),
      RobotsPolicy.fromResponse(404, 'not found page', ROBOTS, UA),
      RobotsPolicy.fromResponse(503, null, ROBOTS, UA),
      RobotsPolicy.unreachable(ROBOTS, UA),
    ];
    for (const p of policies) {
      const back = RobotsPolicy.fromJSON(JSON.parse(JSON.stringify(p)));
      expect(back.toJSON()).toEqual(p.toJSON());
      expect([back.kind, back.outcome, back.status, back.robotsUrl]).toEqual([p.kind, p.outcome, p.status, p.robotsUrl]);
      expect(back.isAllowed(at('/p'))).toBe(p.isAllowed(at('/p')));
      expect(back.crawlDelayMs()).toBe(p.crawlDelayMs());
      expect(back.sitemaps()).toEqual(p.sitemaps());
    }
    expect(policies[0].toJSON()).toMatchObject({ v: 1, status: 200, robotsUrl: ROBOTS, userAgent: UA });
  });

  it('keeps a custom maxBytes', () => {
    const p = RobotsPolicy.fromResponse(200, 'User-agent: *\nDisallow: /a\n', ROBOTS, UA, { maxBytes: 1_000_000 });
    expect(RobotsPolicy.fromJSON(p.toJSON()).toJSON().maxBytes).toBe(1_000_000);
  });

  it.each([null, 'x', {}, { v: 2, status: 200, body: '', robotsUrl: ROBOTS, userAgent: UA, maxBytes: 1 }, { v: 1, status: '200' }])(
    'rejects a corrupt record %j',
    (value) => expect(() => RobotsPolicy.fromJSON(value)).toThrow(/not a stored robots policy/),
  );
});
