import { loadConfig } from '@crawler/config';
import { CrawlUrl } from '@crawler/contracts';
import { MemoryStateStore, StateStore } from '@crawler/state';
import { registrableDomain } from '@crawler/url';
import { UrlFilterService } from './url-filter.service';

function filter(overrides: Record<string, unknown> = {}, state: StateStore = new MemoryStateStore(), env: NodeJS.ProcessEnv = {}) {
  return new UrlFilterService(state, loadConfig(env, { 'filter.scope': 'any', ...overrides }));
}

const seed = (url: string): CrawlUrl => ({ url, depth: 0, source: 'seed', hops: 0 });
const link = (url: string, depth = 1): CrawlUrl => ({ url, depth, source: 'link', hops: 0 });
const redirect = (url: string, depth: number, hops = 1): CrawlUrl => ({ url, depth, source: 'redirect', hops });

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
    const filter = new UrlFilterService(state, loadConfig({}, { 'filter.scope': 'any' }));
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
