import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withoutCookieValues } from './seed-cookies';
import { parseSitePattern, patternMatches } from './site-pattern';
import { liveSiteRule, resolveSiteSettings, siteRule } from './site-rules';
import { parseSiteSettingsFile, SiteSettingsFileError } from './site-settings-file';

const problemsOf = (text: string) => {
  try {
    parseSiteSettingsFile(text, 'sites.yaml');
  } catch (error) {
    if (error instanceof SiteSettingsFileError) return error.problems;
    throw error;
  }
  return [];
};

describe('site patterns', () => {
  it.each([
    ['docs.example.com', 'docs.example.com', true],
    ['docs.example.com', 'www.example.com', false],
    ['docs.example.com', 'docs.example.com:8080', true],
    ['*.example.com', 'example.com', true],
    ['*.example.com', 'a.b.example.com', true],
    ['*.example.com', 'badexample.com', false],
    ['*.example.com', 'example.com.evil.test', false],
    ['localhost:8080', 'localhost:8080', true],
    ['localhost:8080', 'localhost:8081', false],
    ['*.test:8080', 'a.test:8080', true],
    ['Bücher.Example', 'xn--bcher-kva.example', true],
    ['127.0.0.1', '127.0.0.1:9000', true],
    ['127.0.0.1:9000', '127.0.0.1', false],
  ])('%s matches %s: %s', (pattern, host, expected) => {
    expect(patternMatches(parseSitePattern(pattern), host)).toBe(expected);
  });

  it.each(['*', '*.', 'a.*.com', 'http://example.com', 'example.com/docs', 'user@example.com', 'exa mple.com'])('refuses %s', (pattern) => {
    expect(() => parseSitePattern(pattern)).toThrow(/host name|pattern is/);
  });
});

describe('resolveSiteSettings', () => {
  const rules = [
    siteRule('*.example.com', { minDelayMs: 5000, userAgent: 'site-bot', maxPages: 100 }),
    siteRule('docs.example.com', { minDelayMs: 1000 }),
    siteRule('*.docs.example.com', { maxDepth: 2 }),
    siteRule('docs.example.com:8080', { maxPages: 7 }),
  ];

  it('takes each field from the most specific pattern that sets it', () => {
    expect(resolveSiteSettings(rules, 'docs.example.com')).toEqual({
      settings: { minDelayMs: 1000, userAgent: 'site-bot', maxPages: 100, maxDepth: 2 },
      patterns: ['docs.example.com', '*.docs.example.com', '*.example.com'],
    });
    expect(resolveSiteSettings(rules, 'docs.example.com:8080').settings).toEqual({ minDelayMs: 1000, userAgent: 'site-bot', maxPages: 7, maxDepth: 2 });
    expect(resolveSiteSettings(rules, 'www.example.com').settings).toEqual({ minDelayMs: 5000, userAgent: 'site-bot', maxPages: 100 });
    expect(resolveSiteSettings(rules, 'example.org')).toEqual({ settings: {}, patterns: [] });
  });

  it('lets a later rule of the same pattern replace an earlier one whole (a live change over the file)', () => {
    const live = siteRule('*.EXAMPLE.com', { maxDepth: 1 });
    expect(resolveSiteSettings([...rules, live], 'www.example.com').settings).toEqual({ maxDepth: 1 });
  });

  it("takes a site's concurrency from the most specific pattern that sets it, from the file or live", () => {
    const file = parseSiteSettingsFile('sites:\n  "*.example.com":\n    concurrency: 3\n  docs.example.com:\n    concurrency: 1\n', 'f');
    expect(resolveSiteSettings(file, 'www.example.com').settings).toEqual({ concurrency: 3 });
    expect(resolveSiteSettings(file, 'docs.example.com').settings).toEqual({ concurrency: 1 });
    expect(resolveSiteSettings([...file, liveSiteRule('*.example.com', { concurrency: 16 })], 'www.example.com').settings).toEqual({ concurrency: 16 });
  });

  it('refuses what it cannot apply, naming the field', () => {
    expect(() => siteRule('a.test', { concurrency: 0 })).toThrow(/^concurrency: .*>=1/);
    expect(() => siteRule('a.test', { concurrency: 17 })).toThrow(/^concurrency: .*<=16/);
    expect(() => siteRule('a.test', { concurrency: 2.5 })).toThrow(/^concurrency: .*int/);
    expect(() => siteRule('a.test', { render: 'yes' })).toThrow(/^render: .*boolean/);
    expect(() => siteRule('a.test', { cookies: { a: 'b' } })).toThrow(/^cookies: Invalid input: expected array/);
    expect(() => siteRule('a.test', { tls: { verify: false } })).toThrow(
      /^tls.verify: unknown setting \(allowed: caFile, insecureSkipVerify, clientCertFile, clientKeyFile\)/,
    );
    expect(() => siteRule('a.test', { delay: 5 })).toThrow(/^delay: unknown setting \(allowed: minDelayMs, maxPages/);
    expect(() => siteRule('a.test', { headers: { 'User-Agent': 'x' } })).toThrow(/^headers.User-Agent: "User-Agent" may not be set here: set userAgent instead/);
    expect(() => siteRule('a.test', { headers: { 'X-A': 'a\r\nInjected: 1' } })).toThrow(/line break/);
    expect(() => siteRule('a/b', {})).toThrow(/not a host name/);
  });
});

describe('proxy and tls', () => {
  it('takes a proxy URL, none, or a URL with where its credentials are', () => {
    for (const proxy of [
      'none',
      'http://proxy.internal:3128',
      { url: 'http://10.0.0.5:3128', credentialsEnv: 'PROXY_AUTH' },
      { url: 'http://[::1]:8080', credentialsFile: '/run/secrets/proxy' },
    ]) {
      expect(siteRule('a.test', { proxy }).settings).toEqual({ proxy });
    }
    expect(siteRule('a.test', { tls: { caFile: '/etc/ca.pem', clientCertFile: 'c.pem', clientKeyFile: 'k.pem' } }).settings.tls).toEqual({
      caFile: '/etc/ca.pem',
      clientCertFile: 'c.pem',
      clientKeyFile: 'k.pem',
    });
  });

  it.each([
    [{ proxy: 'http://user:pw@proxy:3128' }, /^proxy: may not hold credentials: name them with credentialsEnv or credentialsFile/],
    [{ proxy: 'https://proxy:3128' }, /^proxy: a proxy reached over TLS \(https:\/\/\) is not supported yet/],
    [{ proxy: 'socks5://proxy:1080' }, /^proxy: must be an http:\/\/ URL/],
    [{ proxy: 'http://proxy:3128/path' }, /^proxy: must be the proxy's address only/],
    [{ proxy: 'proxy:3128' }, /^proxy: must be an http:\/\/ URL/],
    [{ proxy: { url: 'http://p:3128', credentialsEnv: 'A', credentialsFile: '/f' } }, /^proxy: set credentialsEnv or credentialsFile, not both/],
    [{ proxy: { url: 'http://p:3128', password: 'x' } }, /^proxy.password: /],
    [{ proxy: { url: 'http://p:3128', credentialsEnv: 'NOT-A-NAME' } }, /^proxy.credentialsEnv: is not an environment variable name/],
    [{ tls: { insecureSkipVerify: 'yes' } }, /^tls.insecureSkipVerify: /],
    [{ tls: { clientCertFile: 'c.pem' } }, /^tls: clientCertFile and clientKeyFile go together/],
    [{ tls: { caFile: 'ca.pem', insecureSkipVerify: true } }, /^tls: caFile means nothing with insecureSkipVerify/],
    [{ tls: { verify: false } }, /^tls.verify: /],
  ])('refuses %j, saying why', (settings, message) => {
    expect(() => siteRule('a.test', settings)).toThrow(message);
  });

  it('is set in the file only, never live', () => {
    expect(() => liveSiteRule('a.test', { proxy: 'none' })).toThrow(/^proxy: set in the site settings file only/);
    expect(() => liveSiteRule('a.test', { tls: { insecureSkipVerify: true } })).toThrow(/^tls: set in the site settings file only/);
    expect(() => liveSiteRule('a.test', { render: false })).toThrow(/^render: set in the site settings file only/);
    expect(liveSiteRule('a.test', { maxPages: 3 }).settings).toEqual({ maxPages: 3 });
  });
});

describe('parseSiteSettingsFile', () => {
  it('reads YAML and JSON alike', () => {
    const yaml = 'sites:\n  "*.example.com":\n    minDelayMs: 3000\n    headers:\n      Accept-Language: en\n';
    const json = '{"sites": {"*.example.com": {"minDelayMs": 3000, "headers": {"Accept-Language": "en"}}}}';
    for (const text of [yaml, json]) {
      const [rule] = parseSiteSettingsFile(text, 'f');
      expect(rule.pattern.text).toBe('*.example.com');
      expect(rule.settings).toEqual({ minDelayMs: 3000, headers: { 'Accept-Language': 'en' } });
    }
  });

  it('names the line, column and field of every problem', () => {
    const text = [
      'sites:', // 1
      '  docs.example.com:', // 2
      '    minDelayMs: -5', // 3
      '    maxPages: many', // 4
      '  "*.example.com":', // 5
      '    concurrency: 40', // 6
      '    colour: blue', // 7
      '  "http://bad":', // 8
      '    maxDepth: 1', // 9
    ].join('\n');
    expect(problemsOf(text)).toEqual([
      expect.stringMatching(/^sites\.yaml:3:17: sites\."docs\.example\.com"\.minDelayMs: .*>=0/),
      expect.stringMatching(/^sites\.yaml:4:15: sites\."docs\.example\.com"\.maxPages: .*number/),
      expect.stringMatching(/^sites\.yaml:6:18: sites\."\*\.example\.com"\.concurrency: .*<=16/),
      expect.stringMatching(/^sites\.yaml:7:5: sites\."\*\.example\.com"\.colour: unknown setting/),
      expect.stringMatching(/^sites\.yaml:8:3: sites\."http:\/\/bad": .*not a host name/),
    ]);
  });

  it('reads cookies as strings or objects, their values from the file, the environment or a file of their own', () => {
    const dir = mkdtempSync(join(tmpdir(), 'seed-cookies-'));
    writeFileSync(join(dir, 'token'), 'from-file\n');
    process.env.SITE_SETTINGS_SPEC_TOKEN = 'from-env';
    const text = [
      'sites:',
      '  "*.example.com":',
      '    cookies:',
      '      - "theme=dark; Path=/docs; Secure"',
      '      - { name: lang, value: en, domain: docs.example.com, expires: "2030-01-01T00:00:00Z" }',
      '      - { name: sid, valueFromEnv: SITE_SETTINGS_SPEC_TOKEN }',
      `      - { name: csrf, valueFromFile: "${join(dir, 'token')}" }`,
    ].join('\n');
    expect(parseSiteSettingsFile(text, 'f')[0].settings.cookies).toEqual([
      { name: 'theme', value: 'dark', path: '/docs', secure: true },
      { name: 'lang', value: 'en', domain: 'docs.example.com', expires: '2030-01-01T00:00:00Z' },
      { name: 'sid', value: 'from-env' },
      { name: 'csrf', value: 'from-file' },
    ]);
    // What is stored and read back (a live rule) is itself valid, and the listing hides the values.
    const rule = siteRule('a.test', JSON.parse(JSON.stringify(parseSiteSettingsFile(text, 'f')[0].settings)));
    expect(rule.settings.cookies?.[2]).toEqual({ name: 'sid', value: 'from-env' });
    expect(withoutCookieValues(rule.settings).cookies?.map((c) => c.value)).toEqual(['(hidden)', '(hidden)', '(hidden)', '(hidden)']);
  });

  it('names the line and field of each bad cookie, never its value', () => {
    delete process.env.SITE_SETTINGS_SPEC_UNSET;
    process.env.SITE_SETTINGS_SPEC_TOKEN = 'from-env';
    const text = [
      'sites:', // 1
      '  a.test:', // 2
      '    cookies:', // 3
      '      - "no value here"', // 4
      '      - { name: sid, valueFromEnv: SITE_SETTINGS_SPEC_UNSET }', // 5
      '      - { name: sid, value: "secret; Path=/" }', // 6
      '      - { name: sid, value: a, valueFromEnv: SITE_SETTINGS_SPEC_TOKEN }', // 7
      '      - { name: sid, value: a, domain: co.uk }', // 8
      '      - { name: "bad name", value: a }', // 9
      '      - { name: sid, valueFromFile: /nonexistent/token }', // 10
      '      - { name: sid, value: a, path: docs }', // 11
      '    headers: { Cookie: "sid=secret2" }', // 12
    ].join('\n');
    const problems = problemsOf(text);
    expect(problems).toEqual([
      expect.stringMatching(/^sites\.yaml:12:24: sites\."a\.test"\.headers\.Cookie: "Cookie" may not be set here: set cookies instead/),
      expect.stringMatching(/^sites\.yaml:4:9: sites\."a\.test"\.cookies\.0: not a cookie: write name=value/),
      expect.stringMatching(/^sites\.yaml:5:36: sites\."a\.test"\.cookies\.1\.valueFromEnv: SITE_SETTINGS_SPEC_UNSET is not set/),
      expect.stringMatching(/^sites\.yaml:6:29: sites\."a\.test"\.cookies\.2\.value: a cookie value may not hold ";".*\(the value is not shown\)$/),
      expect.stringMatching(/^sites\.yaml:7:29: sites\."a\.test"\.cookies\.3\.value: give the value once: value, valueFromEnv or valueFromFile$/),
      expect.stringMatching(/^sites\.yaml:8:40: sites\."a\.test"\.cookies\.4\.domain: co\.uk is a public suffix/),
      expect.stringMatching(/^sites\.yaml:9:17: sites\."a\.test"\.cookies\.5\.name: a cookie name is a token/),
      expect.stringMatching(/^sites\.yaml:10:37: sites\."a\.test"\.cookies\.6\.valueFromFile: cannot read \/nonexistent\/token: ENOENT$/),
      expect.stringMatching(/^sites\.yaml:11:38: sites\."a\.test"\.cookies\.7\.path: a cookie path starts with \/$/),
    ]);
    expect(problems.join('\n')).not.toMatch(/secret/);
  });

  it('refuses a file that is not YAML, a duplicate key, two patterns for the same hosts, and a file without sites', () => {
    expect(problemsOf('sites:\n  a.test: {maxDepth: 1\n')).toEqual([expect.stringMatching(/^sites\.yaml:\d+:\d+: /)]);
    expect(problemsOf('sites:\n  a.test: {}\n  a.test: {}\n')).toEqual([expect.stringMatching(/^sites\.yaml:3:3: .*[Uu]nique/)]);
    expect(problemsOf('sites:\n  A.test: {}\n  a.test: {}\n')).toEqual([expect.stringMatching(/^sites\.yaml:3:3: sites\."a\.test": the same hosts as "A\.test"/)]);
    expect(problemsOf('site:\n  a.test: {}\n')).toEqual([
      expect.stringMatching(/^sites\.yaml:1:1: sites: /),
      expect.stringMatching(/^sites\.yaml:1:1: site: unknown setting/),
    ]);
  });
});
