import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { ConfigError, loadConfig } from '@crawler/config';
import { CrawlUrl, QueueName, SCHEMA_VERSION, UrlBatch } from '@crawler/contracts';
import type { Logger } from '@crawler/logging';
import { noPlugins } from '@crawler/plugin-host/testing';
import { RobotsCache, ROBOTS_NAMESPACE, RobotsPolicy } from '@crawler/robots';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { MemoryStateStore } from '@crawler/state';
import { UrlFilterProcessor } from './url-filter.processor';
import { UrlFilterService } from './url-filter.service';

const logger = () => ({ info: jest.fn(), warn: jest.fn(), error: jest.fn() }) as unknown as Logger & { info: jest.Mock };
const link = (url: string): CrawlUrl => ({ url, depth: 1, source: 'link', hops: 0 });
const seed = (url: string): CrawlUrl => ({ url, depth: 0, source: 'seed', hops: 0 });

function filterWith(env: Record<string, string>, overrides: Record<string, unknown> = {}, state = new MemoryStateStore(), log = logger()) {
  const f = new UrlFilterService(state, loadConfig(env, { 'filter.scope': 'any', ...overrides }), log, noPlugins());
  f.onModuleInit();
  return f;
}

describe('UrlFilterService with user URL rules', () => {
  it('drops what an exclude rule matches and what no include rule matches, counted by rule', async () => {
    const f = filterWith({ URL_FILTER_INCLUDE: '/docs/**', URL_FILTER_EXCLUDE: '/docs/old/**\nre:[?&]sort=' });
    const { accepted, rejected } = await f.filter([
      link('http://a.test/docs/intro'),
      link('http://a.test/docs/old/intro'),
      link('http://a.test/docs/list?sort=asc'),
      link('http://a.test/blog/post'),
    ]);
    expect(accepted.map((u) => u.url)).toEqual(['http://a.test/docs/intro']);
    expect(rejected).toEqual({ excluded: 2, 'not-included': 1 });
  });

  it('asks them after every rule of its own: a URL they would let through is still refused for its scheme, port, scope or robots.txt', async () => {
    const state = new MemoryStateStore();
    const policy = RobotsPolicy.fromResponse(200, 'User-agent: *\nDisallow: /docs/private/', 'http://a.test/robots.txt', 'crawler-bot/0.1');
    await new RobotsCache(state.namespace(ROBOTS_NAMESPACE)).put('http://a.test/', policy, 60_000);
    const f = filterWith({ URL_FILTER_INCLUDE: 're:.' }, { 'filter.scope': 'host' }, state);
    await f.filter([seed('http://a.test/')]);
    const { accepted, rejected } = await f.filter([
      link('ftp://a.test/docs/'),
      link('http://user:pw@a.test/docs/'),
      link('http://a.test:6379/docs/'),
      link('http://b.test/docs/'),
      link('http://a.test/docs/private/x'),
      link('http://a.test/docs/ok'),
    ]);
    expect(accepted.map((u) => u.url)).toEqual(['http://a.test/docs/ok']);
    expect(rejected).toEqual({ scheme: 1, credentials: 1, port: 1, 'out-of-scope': 1, robots: 1 });
  });

  it('lets seeds (and a seed’s redirect) through whatever the rules say; links found later are judged', async () => {
    const f = filterWith({ URL_FILTER_INCLUDE: '/docs/**', URL_FILTER_EXCLUDE: '/start' });
    const seeds = await f.filter([seed('http://a.test/start'), { url: 'http://a.test/home', depth: 0, source: 'redirect', hops: 1 }]);
    expect(seeds.accepted.map((u) => u.url)).toEqual(['http://a.test/start', 'http://a.test/home']);
    expect((await f.filter([link('http://a.test/start'), link('http://a.test/home')])).rejected).toEqual({ excluded: 1, 'not-included': 1 });
  });

  it('reads sitemaps whatever the include rules say, and drops one an exclude rule matches', async () => {
    const f = filterWith({ URL_FILTER_INCLUDE: '/docs/**', URL_FILTER_EXCLUDE: '/old-sitemap.xml' });
    const sitemap = (url: string): CrawlUrl => ({ ...link(url), kind: 'sitemap' });
    const { accepted, rejected } = await f.filter([sitemap('http://a.test/sitemap.xml'), sitemap('http://a.test/old-sitemap.xml')]);
    expect(accepted.map((u) => u.url)).toEqual(['http://a.test/sitemap.xml']);
    expect(rejected).toEqual({ excluded: 1 });
  });

  it('spends no page of a host’s budget on a URL they drop', async () => {
    const f = filterWith({ URL_FILTER_EXCLUDE: '/x/**' }, { 'filter.maxPagesPerHost': 1 });
    const { accepted, rejected } = await f.filter([link('http://a.test/x/1'), link('http://a.test/x/2'), link('http://a.test/y')]);
    expect(accepted.map((u) => u.url)).toEqual(['http://a.test/y']);
    expect(rejected).toEqual({ excluded: 2 });
  });

  it('names the user rule behind a rejection in its debug line', async () => {
    const log = logger();
    const f = filterWith({ URL_FILTER_DEBUG: 'true', URL_FILTER_INCLUDE: 'a.test /docs/**', URL_FILTER_EXCLUDE: '/docs/old/**' }, {}, undefined, log);
    await f.filter([link('http://a.test/docs/old/1'), link('http://a.test/blog')]);
    expect(log.info.mock.calls.map(([fields]) => fields)).toEqual([
      {
        event: 'url-filter-decision',
        url: 'http://a.test/docs/old/1',
        rule: 'excluded',
        userRule: 'excluded by URL_FILTER_EXCLUDE (--exclude) rule 1: exclude /docs/old/**',
      },
      {
        event: 'url-filter-decision',
        url: 'http://a.test/blog',
        rule: 'not-included',
        userRule: 'not-included: matches none of URL_FILTER_INCLUDE (--include) rule 1 (include a.test /docs/**)',
      },
    ]);
  });

  it('refuses to start on a rule that does not compile or could backtrack catastrophically, naming each', () => {
    const dir = mkdtempSync(join(tmpdir(), 'url-rules-'));
    try {
      const file = join(dir, 'rules.txt');
      writeFileSync(file, '# rules\ninclude /docs/**\nexclude path-re:^/(\\w+/)*$\n');
      const start = () => filterWith({ URL_FILTER_EXCLUDE: '/ok/**\nre:[unclosed', URL_FILTER_RULES_FILE: file });
      expect(start).toThrow(ConfigError);
      expect(start).toThrow(/URL_FILTER_EXCLUDE \(--exclude\) rule 2: "re:\[unclosed": does not compile/);
      expect(start).toThrow(new RegExp(`${file} line 3: .*nested quantifiers\\) at position 3 of the expression`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('UrlFilterProcessor with user URL rules', () => {
  it('counts each rejection as filtered.<rule>, like every other rule', async () => {
    const state = new MemoryStateStore();
    const config = loadConfig({ URL_FILTER_INCLUDE: '/docs/**', URL_FILTER_EXCLUDE: '/docs/old/**' }, { 'filter.scope': 'any' });
    let handler!: (batch: UrlBatch) => Promise<void>;
    const pipeline = {
      consume: async (_queue: QueueName, h: (batch: UrlBatch) => Promise<void>) => void (handler = h),
      send: async () => undefined,
    } as unknown as Pipeline;
    const stats = new CrawlStats(state, new Registry(), config);
    const filter = new UrlFilterService(state, config, logger(), noPlugins());
    filter.onModuleInit();
    await new UrlFilterProcessor(pipeline, filter, stats, config).onApplicationBootstrap();
    await handler({ v: SCHEMA_VERSION, urls: ['/docs/a', '/docs/old/a', '/docs/old/b', '/blog'].map((p) => link(`http://a.test${p}`)) });
    await stats.flush();
    expect(await stats.totals()).toMatchObject({ 'filtered.excluded': 2, 'filtered.not-included': 1 });
  });
});
