import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '@crawler/config';
import { CrawlUrl, PluginManifest, pluginQueue, SCHEMA_VERSION } from '@crawler/contracts';
import { PluginRegistry, PluginUnavailableError } from '@crawler/plugin-host';
import type { Logger } from '@crawler/logging';
import { hashBucketsFor, MemoryStateStore, PartitionedHash, RedisStateStore, StateStore } from '@crawler/state';
import { DEFAULT_STRIP_PARAMS, registrableDomain } from '@crawler/url';
import { noPlugins } from '@crawler/plugin-host/testing';
import { stripParamsOption, UrlFilterService } from './url-filter.service';

const quietLogger = () => ({ info: jest.fn(), warn: jest.fn(), error: jest.fn() }) as unknown as Logger & { info: jest.Mock; warn: jest.Mock };

const running: UrlFilterService[] = [];
afterEach(() => running.splice(0).forEach((f) => f.onModuleDestroy()));

/** A filter as the module starts it (init reads the blocklist and starts watching it; stopped after each test). */
function filter(overrides: Record<string, unknown> = {}, state: StateStore = new MemoryStateStore(), env: NodeJS.ProcessEnv = {}) {
  const f = new UrlFilterService(state, loadConfig(env, { 'filter.scope': 'any', ...overrides }), quietLogger(), noPlugins());
  f.onModuleInit();
  running.push(f);
  return f;
}

const seed = (url: string): CrawlUrl => ({ url, depth: 0, source: 'seed', hops: 0 });
const link = (url: string, depth = 1): CrawlUrl => ({ url, depth, source: 'link', hops: 0 });
const redirect = (url: string, depth: number, hops = 1): CrawlUrl => ({ url, depth, source: 'redirect', hops });
const sitemap = (url: string, depth = 0): CrawlUrl => ({ url, kind: 'sitemap', depth, source: 'sitemap', hops: 0 });
const urls = (result: { accepted: CrawlUrl[] }) => result.accepted.map((u) => u.url);

const dir = mkdtempSync(join(tmpdir(), 'url-filter-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('UrlFilterService', () => {
  describe('canonicalisation', () => {
    it('gives spellings of one URL one canonical form', async () => {
      const { accepted, rejected } = await filter().filter([
        link('HTTP://Site.TEST:80/a/./b/../page?b=2&utm_source=news&a=1#section'),
        link('http://site.test/a/page?a=1&b=2'),
        link('http://site.test:80/a/page?utm_medium=x&a=1&b=2&utm_campaign=y#top'),
      ]);
      expect(rejected).toEqual({});
      expect(accepted.map((u) => u.url)).toEqual(Array(3).fill('http://site.test/a/page?a=1&b=2'));
    });

    it('keeps the entry’s depth, source and hops', async () => {
      const { accepted } = await filter().filter([{ url: 'https://Site.test:443/#x', depth: 3, source: 'redirect', hops: 2 }]);
      expect(accepted).toEqual([{ url: 'https://site.test/', depth: 3, source: 'redirect', hops: 2 }]);
    });
  });

  describe('rules', () => {
    it('counts rejections by reason', async () => {
      const f = filter({ 'filter.maxUrlLength': 60, 'filter.maxDepth': 3, 'downloader.maxRedirects': 2 });
      const { accepted, rejected } = await f.filter([
        link('not a url'),
        link('http://'),
        link('ftp://site.test/file'),
        link('mailto:someone@site.test'),
        link('http://user:pw@site.test/'),
        link(`http://site.test/${'x'.repeat(60)}`),
        link('http://site.test/deep', 4),
        link('http://site.test/deeper', 9),
        redirect('http://site.test/hop3', 1, 3),
        link('http://site.test/photo.JPG'),
        link('http://site.test/doc.pdf?download=1'),
        link('http://site.test/ok', 3),
        redirect('http://site.test/hop2', 1, 2),
      ]);
      expect(rejected).toEqual({
        malformed: 2,
        scheme: 2,
        credentials: 1,
        'too-long': 1,
        'too-deep': 2,
        'too-many-redirects': 1,
        extension: 2,
      });
      expect(accepted.map((u) => u.url)).toEqual(['http://site.test/ok', 'http://site.test/hop2']);
    });

    it('measures the length of the canonical URL', async () => {
      const long = `http://site.test/p?${'utm_x=1&'.repeat(20)}a=1`;
      expect(long.length).toBeGreaterThan(60);
      const { accepted } = await filter({ 'filter.maxUrlLength': 60 }).filter([link(long)]);
      expect(accepted.map((u) => u.url)).toEqual(['http://site.test/p?a=1']);
    });

    it('rejects a link that came cut to what a message carries as too-long, whatever URL_FILTER_MAX_URL_LENGTH allows, and logs it with its length', async () => {
      const logger = quietLogger();
      const f = new UrlFilterService(
        new MemoryStateStore(),
        loadConfig({}, { 'filter.scope': 'any', 'filter.maxUrlLength': 20_000, 'filter.debug': true }),
        logger,
        noPlugins(),
      );
      const cut = `http://site.test/${'x'.repeat(8175)}`;
      const { accepted, rejected } = await f.filter([{ ...link(cut), length: 9000 }, link('http://site.test/ok')]);
      expect(rejected).toEqual({ 'too-long': 1 });
      expect(urls({ accepted })).toEqual(['http://site.test/ok']);
      const logged = logger.info.mock.calls.map(([fields]) => fields);
      expect(logged).toContainEqual({ event: 'url-filter-decision', url: cut, length: 9000, rule: 'too-long' });
    });

    describe('and plugins', () => {
      const pngManifest: PluginManifest = {
        v: SCHEMA_VERSION,
        name: 'png',
        claims: { contentTypes: ['image/png'], extensions: ['png'], urlPatterns: ['/avatars/*'] },
        pageHook: false,
        queue: pluginQueue('png'),
      };
      const withPlugins = (env: NodeJS.ProcessEnv) => {
        const state = new MemoryStateStore();
        const config = loadConfig(env, { 'filter.scope': 'any' });
        const registry = new PluginRegistry(state, config, quietLogger());
        const f = new UrlFilterService(state, config, quietLogger(), registry);
        f.onModuleInit();
        running.push(f);
        return { f, registry };
      };
      const candidates = [link('http://site.test/logo.png'), link('http://site.test/photo.jpg'), link('http://site.test/avatars/7.gif')];

      it('does not block an extension or path an enabled plugin claims; the rest of the list still applies', async () => {
        const { f, registry } = withPlugins({ PLUGINS: 'png' });
        await registry.register(pngManifest);
        const { accepted, rejected } = await f.filter(candidates);
        expect(accepted.map((u) => u.url)).toEqual(['http://site.test/logo.png', 'http://site.test/avatars/7.gif']);
        expect(rejected).toEqual({ extension: 1 });
      });

      it('ignores a registered plugin that PLUGINS does not enable', async () => {
        const { f, registry } = withPlugins({});
        await registry.register(pngManifest);
        expect((await f.filter(candidates)).rejected).toEqual({ extension: 3 });
      });

      it('waits for an enabled plugin to register, and names it when it never does', async () => {
        const { f, registry } = withPlugins({ PLUGINS: 'png', PLUGINS_WAIT_MS: '2000' });
        const pending = f.filter(candidates);
        setTimeout(() => void registry.register(pngManifest), 300);
        expect((await pending).accepted).toHaveLength(2);

        const { f: lonely } = withPlugins({ PLUGINS: 'png', PLUGINS_WAIT_MS: '300' });
        const error = await lonely.filter(candidates).catch((e) => e);
        expect(error).toBeInstanceOf(PluginUnavailableError);
        expect(error.message).toMatch(/"png".*start plugin-png/);
      });
    });

    it('takes the redirect limit from downloader.maxRedirects', async () => {
      const { rejected } = await filter({ 'downloader.maxRedirects': 0 }).filter([redirect('http://site.test/', 0, 1)]);
      expect(rejected).toEqual({ 'too-many-redirects': 1 });
    });

    it('uses a configured extension list instead of the built-in one', async () => {
      const { accepted, rejected } = await filter({ 'filter.blockedExtensions': ['php'] }).filter([
        link('http://site.test/index.php'),
        link('http://site.test/photo.jpg'),
      ]);
      expect(rejected).toEqual({ extension: 1 });
      expect(accepted.map((u) => u.url)).toEqual(['http://site.test/photo.jpg']);
    });
  });

  describe("scope 'host'", () => {
    it('lets a seed register its host; links to that host pass, others fail', async () => {
      const f = filter({ 'filter.scope': 'host' });
      expect((await f.filter([seed('http://www.a.test/')])).accepted).toHaveLength(1);
      const { accepted, rejected } = await f.filter([
        link('http://www.a.test/page'),
        link('https://WWW.A.TEST:8443/other-port'),
        link('http://blog.a.test/'),
        link('http://b.test/'),
      ]);
      expect(accepted.map((u) => u.url)).toEqual(['http://www.a.test/page', 'https://www.a.test:8443/other-port']);
      expect(rejected).toEqual({ 'out-of-scope': 2 });
    });

    it('rejects every link before any seed', async () => {
      expect((await filter({ 'filter.scope': 'host' }).filter([link('http://a.test/')])).rejected).toEqual({ 'out-of-scope': 1 });
    });

    it('lets a seed’s redirect (depth 0) register its target host, but not a later redirect', async () => {
      const f = filter({ 'filter.scope': 'host' });
      await f.filter([seed('http://a.test/')]);
      expect((await f.filter([redirect('https://www.a.test/', 0)])).accepted).toHaveLength(1);
      expect((await f.filter([redirect('http://elsewhere.test/', 2)])).rejected).toEqual({ 'out-of-scope': 1 });
      const { accepted, rejected } = await f.filter([link('https://www.a.test/page'), link('http://elsewhere.test/')]);
      expect(accepted.map((u) => u.url)).toEqual(['https://www.a.test/page']);
      expect(rejected).toEqual({ 'out-of-scope': 1 });
    });

    it('registers a seed in the shared store', async () => {
      const state = new MemoryStateStore();
      await filter({ 'filter.scope': 'host' }, state).filter([seed('http://A.test:8080/')]);
      expect(await state.namespace('url-filter').setMembers('scope')).toEqual(['a.test']);
    });
  });

  describe("scope 'domain'", () => {
    it('treats an unknown TLD like .test as a public suffix (the PSL default rule)', () => {
      expect(registrableDomain('www.a.test')).toBe('a.test');
      expect(registrableDomain('blog.a.test')).toBe('a.test');
    });

    it('lets a www. seed admit every subdomain of its registrable domain, and nothing else', async () => {
      const f = filter({ 'filter.scope': 'domain' });
      await f.filter([seed('http://www.a.test/')]);
      const { accepted, rejected } = await f.filter([
        link('http://blog.a.test/'),
        link('http://a.test/'),
        link('http://x.y.a.test/'),
        link('http://b.test/'),
        link('http://a.test.evil.test/'),
      ]);
      expect(accepted.map((u) => u.url)).toEqual(['http://blog.a.test/', 'http://a.test/', 'http://x.y.a.test/']);
      expect(rejected).toEqual({ 'out-of-scope': 2 });
    });

    it('refuses seeds, links, redirect targets and sitemaps on ports no HTTP should reach', async () => {
      const f = filter({ 'filter.scope': 'host' });
      const { accepted, rejected } = await f.filter([
        seed('http://site.test:25/'),
        seed('http://site.test/'),
        link('http://site.test:6379/'),
        link('http://site.test:9000/bucket'),
        link('https://site.test:22/'),
        link('http://site.test:81/'),
        link('http://site.test:5432/'),
        link('http://[::1]:11211/'),
        redirect('http://site.test:27017/', 1),
        sitemap('http://site.test:9200/sitemap.xml'),
        link('http://site.test:8080/ok'),
        link('http://site.test:45123/ok'),
        link('https://site.test:443/ok'),
      ]);
      expect(rejected).toEqual({ port: 9 });
      expect(urls({ accepted })).toEqual(['http://site.test/', 'http://site.test:8080/ok', 'http://site.test:45123/ok', 'https://site.test/ok']);
    });

    it('takes the ports from URL_FILTER_ALLOWED_PORTS and URL_FILTER_BLOCKED_PORTS', async () => {
      const f = filter({}, new MemoryStateStore(), { URL_FILTER_ALLOWED_PORTS: '443,8000-8999,9000', URL_FILTER_BLOCKED_PORTS: '8080' });
      const { accepted, rejected } = await f.filter([
        link('https://site.test/'),
        link('http://site.test/'),
        link('http://site.test:8080/'),
        link('http://site.test:8081/'),
        link('http://site.test:9000/'),
        link('http://site.test:9001/'),
      ]);
      expect(rejected).toEqual({ port: 3 });
      expect(urls({ accepted })).toEqual(['https://site.test/', 'http://site.test:8081/', 'http://site.test:9000/']);
    });

    it("drops links and redirects to the crawler's own ports (its Redis, S3, PostgreSQL, PORT), whatever the block list", async () => {
      const env = {
        REDIS_URL: 'redis://127.0.0.1:6390',
        S3_URL: 'http://KEY:SECRET@127.0.0.1:9199',
        RECORDS_URL: 'postgres://crawler@127.0.0.1:5433/crawl',
        PORT: '3100',
        URL_FILTER_BLOCKED_PORTS: '8081',
      };
      const f = filter({}, new MemoryStateStore(), env);
      const { accepted, rejected } = await f.filter([
        link('http://site.test:6390/'),
        redirect('http://site.test:9199/bucket', 1),
        link('http://site.test:5433/'),
        link('http://site.test:3100/'),
        link('http://site.test:6379/'),
        link('http://site.test:8081/'),
        link('http://site.test:8082/'),
      ]);
      expect(rejected).toEqual({ port: 6 });
      expect(urls({ accepted })).toEqual(['http://site.test:8082/']);
    });

    it('keeps sites under a private PSL suffix apart', async () => {
      const f = filter({ 'filter.scope': 'domain' });
      await f.filter([seed('https://alice.github.io/')]);
      const { accepted, rejected } = await f.filter([link('https://x.alice.github.io/'), link('https://bob.github.io/')]);
      expect(accepted.map((u) => u.url)).toEqual(['https://x.alice.github.io/']);
      expect(rejected).toEqual({ 'out-of-scope': 1 });
    });

    it('scopes an IP seed to that IP', async () => {
      const f = filter({ 'filter.scope': 'domain' });
      await f.filter([seed('http://127.0.0.1:8080/')]);
      const { accepted, rejected } = await f.filter([link('http://127.0.0.1:9090/x'), link('http://127.0.0.2/')]);
      expect(accepted.map((u) => u.url)).toEqual(['http://127.0.0.1:9090/x']);
      expect(rejected).toEqual({ 'out-of-scope': 1 });
    });
  });

  describe("scope 'any'", () => {
    it('admits every host, with no seed at all', async () => {
      const state = new MemoryStateStore();
      const { accepted, rejected } = await filter({ 'filter.scope': 'any' }, state).filter([
        link('http://a.test/'),
        link('http://b.test/'),
        link('https://c.example.com/'),
      ]);
      expect(accepted).toHaveLength(3);
      expect(rejected).toEqual({});
      expect(await state.namespace('url-filter').setMembers('scope')).toEqual([]);
    });
  });

  it('shares seeds between instances through one state store', async () => {
    const state = new MemoryStateStore();
    const a = filter({ 'filter.scope': 'host' }, state);
    const b = filter({ 'filter.scope': 'host' }, state);
    // b looks first (and is refused), then a registers the seed: b must not have cached the refusal.
    expect((await b.filter([link('http://site.test/x')])).rejected).toEqual({ 'out-of-scope': 1 });
    await a.filter([seed('http://site.test/')]);
    expect((await b.filter([link('http://site.test/x')])).accepted).toHaveLength(1);
    await b.filter([seed('http://other.test/')]);
    expect((await a.filter([link('http://other.test/y')])).accepted).toHaveLength(1);
  });

  describe('regressions', () => {
    it('blocks extensions configured with a leading dot', async () => {
      const f = filter({}, new MemoryStateStore(), { URL_FILTER_BLOCKED_EXTENSIONS: '.pdf,.zip' });
      expect((await f.filter([link('http://site.test/report.pdf')])).rejected).toEqual({ extension: 1 });
    });
  });
});

describe('UrlFilterService and robots.txt', () => {
  it('rejects a URL the site’s cached robots.txt disallows, and lets unknown sites through to the downloader', async () => {
    const { MemoryStateStore } = await import('@crawler/state');
    const { loadConfig } = await import('@crawler/config');
    const { RobotsCache, RobotsPolicy, ROBOTS_NAMESPACE } = await import('@crawler/robots');
    const { UrlFilterService } = await import('./url-filter.service');
    const state = new MemoryStateStore();
    const filter = new UrlFilterService(state, loadConfig({}, { 'filter.scope': 'any' }), quietLogger(), noPlugins());
    const policy = RobotsPolicy.fromResponse(200, 'User-agent: *\nDisallow: /private/', 'http://a.test/robots.txt', 'crawler-bot/0.1');
    await new RobotsCache(state.namespace(ROBOTS_NAMESPACE)).put('http://a.test/', policy, 60_000);
    const result = await filter.filter([
      { url: 'http://a.test/private/x', depth: 1, source: 'link', hops: 0 },
      { url: 'http://a.test/public', depth: 1, source: 'link', hops: 0 },
      { url: 'http://b.test/private/x', depth: 1, source: 'link', hops: 0 },
    ]);
    expect(result.accepted.map((u) => u.url)).toEqual(['http://a.test/public', 'http://b.test/private/x']);
    expect(result.rejected).toEqual({ robots: 1 });
  });
});

describe('UrlFilterService: tracking and session parameters', () => {
  it('strips the built-in list when none is configured', async () => {
    const result = await filter().filter([link('http://site.test/p?gclid=x&PHPSESSID=y&utm_term=z&q=1')]);
    expect(urls(result)).toEqual(['http://site.test/p?q=1']);
  });

  it('strips the configured list instead, `*` marking a prefix', async () => {
    const result = await filter({ 'filter.stripParams': ['ref', 'trk_*'] }).filter([link('http://site.test/p?REF=a&trk_src=b&trk_=c&trkx=d&gclid=e&q=1')]);
    expect(urls(result)).toEqual(['http://site.test/p?gclid=e&q=1&trkx=d']);
  });

  it('reads the list from URL_FILTER_STRIP_PARAMS', async () => {
    const f = filter({}, new MemoryStateStore(), { URL_FILTER_STRIP_PARAMS: 'Sort, sess_*' });
    expect(urls(await f.filter([link('http://site.test/p?sort=asc&sess_id=1&utm_source=x')]))).toEqual(['http://site.test/p?utm_source=x']);
  });

  describe('stripParamsOption', () => {
    it('is the built-in list for nothing configured', () => {
      expect(stripParamsOption(undefined)).toBe(DEFAULT_STRIP_PARAMS);
      expect(stripParamsOption([])).toBe(DEFAULT_STRIP_PARAMS);
      expect(stripParamsOption([' ', ''])).toBe(DEFAULT_STRIP_PARAMS);
    });
    it('turns `x*` into a case-insensitive prefix pattern, with regex characters taken literally', () => {
      const [exact, prefix, dotted] = stripParamsOption(['sid', 'utm_*', 'a.b*']);
      expect(exact).toBe('sid');
      expect(prefix).toEqual(/^utm_/i);
      expect((dotted as RegExp).test('a.bc')).toBe(true);
      expect((dotted as RegExp).test('axbc')).toBe(false);
    });
  });
});

describe("UrlFilterService: scope 'allowlist'", () => {
  const allowlist = (domains: string[], state?: StateStore) => filter({ 'filter.scope': 'allowlist', 'filter.allowedDomains': domains }, state);

  it('admits the listed domains and their subdomains, seeds included, and nothing else', async () => {
    const state = new MemoryStateStore();
    const f = allowlist(['a.test', '*.Example.COM'], state);
    const result = await f.filter([
      seed('http://www.a.test/'),
      seed('http://b.test/'),
      link('http://a.test/x'),
      link('http://deep.sub.a.test/'),
      link('http://shop.example.com/'),
      link('http://xa.test/'),
      link('http://a.test.evil.test/'),
    ]);
    expect(urls(result)).toEqual(['http://www.a.test/', 'http://a.test/x', 'http://deep.sub.a.test/', 'http://shop.example.com/']);
    expect(result.rejected).toEqual({ 'out-of-scope': 3 });
    // A seed outside the list does not widen it.
    expect(await state.namespace('url-filter').setMembers('scope')).toEqual([]);
    expect((await f.filter([link('http://b.test/page')])).rejected).toEqual({ 'out-of-scope': 1 });
  });

  it('reads the list from URL_FILTER_ALLOWED_DOMAINS', async () => {
    const f = new UrlFilterService(
      new MemoryStateStore(),
      loadConfig({ URL_FILTER_SCOPE: 'allowlist', URL_FILTER_ALLOWED_DOMAINS: 'a.test, B.test' }),
      quietLogger(),
      noPlugins(),
    );
    f.onModuleInit();
    expect(urls(await f.filter([link('http://x.b.test/'), link('http://c.test/')]))).toEqual(['http://x.b.test/']);
  });

  it('refuses an empty list and entries that are not domains, naming the variable', () => {
    expect(() => allowlist([])).toThrow(ConfigError);
    expect(() => allowlist([])).toThrow(/URL_FILTER_ALLOWED_DOMAINS: scope 'allowlist' needs at least one domain/);
    expect(() => allowlist(['a.test', 'http://b.test/x'])).toThrow(/URL_FILTER_ALLOWED_DOMAINS: not domain names: "http:\/\/b.test\/x"/);
  });
});

describe('UrlFilterService: domain blocklist', () => {
  let n = 0;
  const file = (text: string) => {
    const path = join(dir, `blocklist-${++n}.txt`);
    writeFileSync(path, text);
    return path;
  };

  it('drops a listed domain and its subdomains', async () => {
    const f = filter({ 'filter.blocklistFile': file('# spam\nbad.test\n\n*.worse.test  # and all below\n') });
    const result = await f.filter([
      link('http://bad.test/'),
      link('http://www.bad.test/x'),
      link('http://a.worse.test/'),
      link('http://notbad.test/'),
      seed('http://bad.test/'),
    ]);
    expect(urls(result)).toEqual(['http://notbad.test/']);
    expect(result.rejected).toEqual({ blocklisted: 4 });
  });

  it('applies to sitemaps too', async () => {
    const f = filter({ 'filter.blocklistFile': file('bad.test\n') });
    expect((await f.filter([sitemap('http://bad.test/sitemap.xml')])).rejected).toEqual({ blocklisted: 1 });
  });

  it('stops the service at boot when the file is missing, naming URL_FILTER_BLOCKLIST_FILE', () => {
    const missing = join(dir, 'no-such-file.txt');
    expect(() => filter({ 'filter.blocklistFile': missing })).toThrow(ConfigError);
    expect(() => filter({ 'filter.blocklistFile': missing })).toThrow(`URL_FILTER_BLOCKLIST_FILE: cannot read ${missing}`);
  });

  it('picks up a changed file while running, on its timer, and stops the timer on destroy', async () => {
    const path = file('bad.test\n');
    const f = filter({ 'filter.blocklistFile': path, 'filter.blocklistReloadMs': 100 });
    // A new URL each time: one passed on already is dropped as a repeat before any rule.
    let n = 0;
    const fresh = () => link(`http://new.test/${n++}`);
    expect((await f.filter([fresh()])).accepted).toHaveLength(1);
    writeFileSync(path, 'bad.test\nnew.test\n');
    const deadline = Date.now() + 5000;
    while ((await f.filter([fresh()])).accepted.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect((await f.filter([fresh()])).rejected).toEqual({ blocklisted: 1 });
    f.onModuleDestroy();
    writeFileSync(path, 'bad.test\n');
    await new Promise((r) => setTimeout(r, 300));
    expect((await f.filter([fresh()])).rejected).toEqual({ blocklisted: 1 });
  });
});

describe('UrlFilterService: spider traps', () => {
  const NOW = Date.UTC(2031, 4, 15, 12);

  it('drops and counts repeated path runs, far calendar dates and exploding query strings', async () => {
    const many = Array.from({ length: 5 }, (_, i) => `p${i}=1`).join('&');
    const { accepted, rejected } = await filter({ 'filter.maxQueryParams': 4, 'filter.calendarWindowDays': 30 }).filter(
      [
        link('http://site.test/a/b/a/b/a/b/'),
        link('http://site.test/a/a/a'),
        link('http://site.test/a/b/a/b/'),
        link('http://site.test/calendar/2031/05'),
        link('http://site.test/calendar/2031/08'),
        link('http://site.test/cal?view=day&date=2030-01-01'),
        link(`http://site.test/search?${many}`),
        link('http://site.test/search?p1=1&p2=2&p3=3&p4=4'),
      ],
      NOW,
    );
    expect(rejected).toEqual({ 'trap.repeated-path': 2, 'trap.calendar': 2, 'too-many-params': 1 });
    expect(accepted.map((u) => u.url)).toEqual(['http://site.test/a/b/a/b/', 'http://site.test/calendar/2031/05', 'http://site.test/search?p1=1&p2=2&p3=3&p4=4']);
  });

  it('counts query parameters after tracking parameters are stripped', async () => {
    const result = await filter({ 'filter.maxQueryParams': 1 }).filter([link('http://site.test/p?utm_source=a&utm_medium=b&q=1')]);
    expect(urls(result)).toEqual(['http://site.test/p?q=1']);
  });

  it('takes the repeat limit from the configuration', async () => {
    const f = filter({ 'filter.maxPathRepeats': 1 });
    expect((await f.filter([link('http://site.test/a/a/')])).rejected).toEqual({ 'trap.repeated-path': 1 });
  });

  it('lets a sitemap through the extension rule and the traps, but not the length, scheme or scope rules', async () => {
    const f = filter({ 'filter.scope': 'host', 'filter.maxQueryParams': 0, 'filter.maxUrlLength': 60 });
    await f.filter([seed('http://site.test/')]);
    const { accepted, rejected } = await f.filter(
      [
        sitemap('http://site.test/sitemap.xml.gz'),
        sitemap('http://site.test/sitemaps/2001/01'),
        sitemap('http://site.test/s/a/s/a/s/a/sitemap.xml?page=2'),
        sitemap(`http://site.test/${'x'.repeat(60)}.xml`),
        sitemap('ftp://site.test/sitemap.xml'),
        sitemap('http://other.test/sitemap.xml'),
        link('http://site.test/archive.gz'),
      ],
      NOW,
    );
    expect(accepted.map((u) => u.url)).toEqual([
      'http://site.test/sitemap.xml.gz',
      'http://site.test/sitemaps/2001/01',
      'http://site.test/s/a/s/a/s/a/sitemap.xml?page=2',
    ]);
    expect(accepted.every((u) => u.kind === 'sitemap')).toBe(true);
    expect(rejected).toEqual({ 'too-long': 1, scheme: 1, 'out-of-scope': 1, extension: 1 });
  });
});

describe('UrlFilterService: per-host page budget', () => {
  const pages = (host: string, n: number, from = 0) => Array.from({ length: n }, (_, i) => link(`http://${host}/p/${from + i}`));

  it('admits maxPagesPerHost URLs per host, then drops the rest as host-budget', async () => {
    const state = new MemoryStateStore();
    const f = filter({ 'filter.maxPagesPerHost': 3 }, state);
    const first = await f.filter([...pages('a.test', 5), ...pages('b.test', 2), link('http://a.test:8080/other-port')]);
    expect(urls(first)).toEqual([
      'http://a.test/p/0',
      'http://a.test/p/1',
      'http://a.test/p/2',
      'http://b.test/p/0',
      'http://b.test/p/1',
      'http://a.test:8080/other-port',
    ]);
    expect(first.rejected).toEqual({ 'host-budget': 2 });
    expect((await f.filter(pages('a.test', 1, 10))).rejected).toEqual({ 'host-budget': 1 });
    // The count is what was admitted, never more (a budget under 16 is reserved no page ahead).
    expect(await state.namespace('url-filter').hashGetAll('host-pages')).toEqual({ 'a.test': '3', 'b.test': '2', 'a.test:8080': '1' });
  });

  it('counts a URL found again (a link on every page) once', async () => {
    const state = new MemoryStateStore();
    const f = filter({ 'filter.maxPagesPerHost': 2, 'filter.recentUrls': 0 }, state);
    const nav = link('http://a.test/about');
    const results = [];
    for (const batch of [[nav, link('http://a.test/x')], [nav], [nav, link('http://a.test/y')], [nav]]) results.push(await f.filter(batch));
    expect(results.flatMap(urls)).toEqual(['http://a.test/about', 'http://a.test/x', 'http://a.test/about', 'http://a.test/about', 'http://a.test/about']);
    expect(results.map((r) => r.rejected)).toEqual([{}, {}, { 'host-budget': 1 }, {}]);
    expect(await state.namespace('url-filter').hashGet('host-pages', 'a.test')).toBe('2');
  });

  it('drops a link it passed on lately as a repeat, before any rule, but never a seed', async () => {
    const f = filter({ 'filter.maxPagesPerHost': 2 });
    const nav = link('http://a.test/about');
    const result = await f.filter([nav, nav, link('http://a.test/x'), nav, link('http://a.test/y')]);
    expect(urls(result)).toEqual(['http://a.test/about', 'http://a.test/x']);
    expect(result).toMatchObject({ rejected: { 'host-budget': 1 }, repeats: 2 });
    const seed = { ...nav, source: 'seed' as const, depth: 0 };
    expect(urls(await f.filter([seed]))).toEqual(['http://a.test/about']);
  });

  it('takes a link for a repeat only once it was passed on: a batch whose send failed is filtered again whole', async () => {
    const f = filter();
    const batch = [link('http://a.test/about'), link('http://a.test/x')];
    const first = await f.filter(batch);
    expect(first.links).toEqual(['http://a.test/about', 'http://a.test/x']);
    // Its send failed: nothing remembered, so the retry accepts the same links.
    const retry = await f.filter(batch);
    expect(urls(retry)).toEqual(['http://a.test/about', 'http://a.test/x']);
    f.passedOn(retry);
    expect(await f.filter([...batch, link('http://a.test/y')])).toMatchObject({ repeats: 2, links: ['http://a.test/y'] });
  });

  it('counts only URLs the filter accepts', async () => {
    const state = new MemoryStateStore();
    const f = filter({ 'filter.maxPagesPerHost': 2 }, state);
    const result = await f.filter([link('http://a.test/a/a/a'), link('http://a.test/photo.jpg'), link('http://a.test/1'), link('http://a.test/2')]);
    expect(urls(result)).toEqual(['http://a.test/1', 'http://a.test/2']);
    expect(result.rejected).toEqual({ 'trap.repeated-path': 1, extension: 1 });
  });

  it('never admits more than the budget, however many replicas ask at once', async () => {
    const state = new MemoryStateStore();
    const replicas = [filter({ 'filter.maxPagesPerHost': 10 }, state), filter({ 'filter.maxPagesPerHost': 10 }, state)];
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => replicas[i % 2].filter(pages('a.test', 1, i))));
    expect(results.reduce((n, r) => n + r.accepted.length, 0)).toBe(10);
    expect(await state.namespace('url-filter').hashGet('host-pages', 'a.test')).toBe('10');
  });

  it('reserves pages of a large budget ahead: a batch a host mostly asks nothing of the state store', async () => {
    const state = new MemoryStateStore();
    const counts = state.namespace('url-filter');
    const increments = [jest.spyOn(MemoryStateStore.prototype, 'hashIncrMany'), jest.spyOn(MemoryStateStore.prototype, 'hashIncrEach')];
    try {
      const f = filter({ 'filter.maxPagesPerHost': 100_000 }, state);
      for (let batch = 0; batch < 20; batch++) expect(urls(await f.filter(pages('a.test', 5, batch * 5)))).toHaveLength(5);
      // 100 pages: reserved 256 ahead, so one increment, not twenty.
      expect(increments.reduce((n, spy) => n + spy.mock.calls.length, 0)).toBe(1);
      expect(Number(await counts.hashGet('host-pages', 'a.test'))).toBe(5 + 256);
    } finally {
      for (const spy of increments) spy.mockRestore();
    }
  });

  it('admits exactly the budget over replicas that reserve ahead, none left unused once both have asked past it', async () => {
    const state = new MemoryStateStore();
    const replicas = [filter({ 'filter.maxPagesPerHost': 200 }, state), filter({ 'filter.maxPagesPerHost': 200 }, state)];
    let accepted = 0;
    for (let i = 0; i < 300; i++) accepted += (await replicas[i % 2].filter(pages('a.test', 1, i))).accepted.length;
    expect(accepted).toBe(200);
    expect(await state.namespace('url-filter').hashGet('host-pages', 'a.test')).toBe('200');
  });

  it('does not count sitemaps, and 0 means no budget', async () => {
    const limited = filter({ 'filter.maxPagesPerHost': 1 });
    expect(urls(await limited.filter([sitemap('http://a.test/sitemap.xml'), sitemap('http://a.test/sitemap-2.xml'), link('http://a.test/')]))).toHaveLength(3);
    const unlimited = filter({ 'filter.maxPagesPerHost': 0 });
    expect(urls(await unlimited.filter(pages('a.test', 50)))).toHaveLength(50);
  });
});

describe('UrlFilterService: per-host page budget on a Redis Cluster', () => {
  const REDIS_CLUSTER_URL = process.env.REDIS_CLUSTER_URL || 'redis+cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002';
  const env = { REDIS_URL: REDIS_CLUSTER_URL };
  const pages = (host: string, n: number, from = 0) => Array.from({ length: n }, (_, i) => link(`http://${host}/p/${from + i}`));
  let state: RedisStateStore;
  let hostPages: PartitionedHash;

  beforeEach(() => {
    state = new RedisStateStore({ url: REDIS_CLUSTER_URL, prefix: `t17h-url-filter-${process.pid}-${Math.random().toString(36).slice(2)}` });
    hostPages = new PartitionedHash(state.namespace('url-filter'), 'host-pages', hashBucketsFor(REDIS_CLUSTER_URL));
  });

  afterEach(async () => {
    await state.clear();
    await state.close();
  });

  it('admits maxPagesPerHost URLs of each of many hosts in one batch, counted in the host-pages buckets', async () => {
    const f = filter({ 'filter.maxPagesPerHost': 2 }, state, env);
    const hosts = Array.from({ length: 30 }, (_, i) => `h${i}.test`);
    const result = await f.filter(hosts.flatMap((host) => pages(host, 3)));
    expect(urls(result)).toEqual(hosts.flatMap((host) => pages(host, 2).map((u) => u.url)));
    expect(result.rejected).toEqual({ 'host-budget': 30 });
    expect(await hostPages.getAll()).toEqual(Object.fromEntries(hosts.map((host) => [host, '2'])));
    expect(new Set(hosts.map((host) => hostPages.keyOf(host))).size).toBeGreaterThan(20);
    expect(await state.namespace('url-filter').hashGetAll('host-pages')).toEqual({});
  });

  it('never admits more than the budget, however many replicas ask at once', async () => {
    const replicas = [filter({ 'filter.maxPagesPerHost': 10 }, state, env), filter({ 'filter.maxPagesPerHost': 10 }, state, env)];
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => replicas[i % 2].filter([...pages('a.test', 1, i), ...pages('b.test', 1, i)])));
    expect(results.reduce((n, r) => n + r.accepted.length, 0)).toBe(20);
    expect(await hostPages.get('a.test')).toBe('10');
    expect(await hostPages.get('b.test')).toBe('10');
  });
});
