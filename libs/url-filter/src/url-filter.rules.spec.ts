import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '@crawler/config';
import { CrawlUrl, PluginManifest, pluginQueue, SCHEMA_VERSION } from '@crawler/contracts';
import type { Logger } from '@crawler/logging';
import { PluginRegistry } from '@crawler/plugin-host';
import { MemoryStateStore } from '@crawler/state';
import { noPlugins } from '@crawler/plugin-host/testing';
import { FILTER_RULES } from './url-filter.rules';
import { UrlFilterService } from './url-filter.service';

const DOCS = join(__dirname, '../../../docs');
const BEGIN = '<!-- filter-rules:begin -->';
const END = '<!-- filter-rules:end -->';
const ASKED = { canonical: 'while canonicalising', url: 'per URL', batch: 'per batch' } as const;

/** The list as docs/url-lifecycle.md shows it. */
function rulesTable(): string {
  const rows = FILTER_RULES.map((r, i) => `| ${i + 1} | \`${r.name}\` | ${r.appliesTo} | ${ASKED[r.stage]} | ${r.decision} | ${r.when} |`);
  return ['| # | Rule | Applies to | Asked | Decision | When |', '|---|---|---|---|---|---|', ...rows].join('\n');
}

describe('FILTER_RULES', () => {
  it('is the list docs/url-lifecycle.md shows (UPDATE_DOCS=1 rewrites the doc)', () => {
    const path = join(DOCS, 'url-lifecycle.md');
    const doc = readFileSync(path, 'utf8');
    const begin = doc.indexOf(BEGIN);
    const end = doc.indexOf(END);
    expect(begin).toBeGreaterThan(-1);
    expect(end).toBeGreaterThan(begin);
    const fresh = `${doc.slice(0, begin + BEGIN.length)}\n${rulesTable()}\n${doc.slice(end)}`;
    if (process.env.UPDATE_DOCS === '1') writeFileSync(path, fresh);
    expect(readFileSync(path, 'utf8')).toBe(fresh);
  });

  it('is the order of the reasons in docs/configuration.md’s table of rules', () => {
    const doc = readFileSync(join(DOCS, 'configuration.md'), 'utf8');
    const start = doc.indexOf('| Rule | Reason | Setting |');
    const table = doc.slice(start, doc.indexOf('\n\n', start));
    const reasons = table
      .split('\n')
      .slice(2)
      .flatMap((row) => [...row.split('|')[2].matchAll(/`([^`]+)`/g)].map((m) => m[1]));
    expect(reasons).toEqual(FILTER_RULES.filter((r) => r.decision === 'reject').map((r) => r.name));
  });

  it('names each rule once, and puts every exemption just before a rule that rejects', () => {
    const names = FILTER_RULES.map((r) => r.name);
    expect(new Set(names).size).toBe(names.length);
    FILTER_RULES.forEach((r, i) => {
      if (r.decision === 'exempt') expect(FILTER_RULES[i + 1]).toMatchObject({ stage: r.stage, decision: 'reject' });
    });
    expect(FILTER_RULES[FILTER_RULES.length - 1].decision).toBe('accept');
  });
});

describe('UrlFilterService and its rule list', () => {
  const link = (url: string, depth = 1): CrawlUrl => ({ url, depth, source: 'link', hops: 0 });
  const logger = () => ({ info: jest.fn(), warn: jest.fn(), error: jest.fn() }) as unknown as Logger & { info: jest.Mock };

  it('applies every rule after plugin-claim to a claimed URL', async () => {
    const state = new MemoryStateStore();
    const config = loadConfig({ PLUGINS: 'png' }, { 'filter.scope': 'host', 'filter.maxPathRepeats': 1 });
    const registry = new PluginRegistry(state, config, logger());
    const manifest: PluginManifest = {
      v: SCHEMA_VERSION,
      name: 'png',
      claims: { contentTypes: ['image/png'], extensions: ['png'], urlPatterns: [] },
      pageHook: false,
      queue: pluginQueue('png'),
    };
    await registry.register(manifest);
    const f = new UrlFilterService(state, config, logger(), registry);
    f.onModuleInit();
    await f.filter([{ url: 'http://a.test/', depth: 0, source: 'seed', hops: 0 }]);
    const { accepted, rejected } = await f.filter([link('http://a.test/logo.png'), link('http://b.test/logo.png'), link('http://a.test/x/x/logo.png')]);
    expect(accepted.map((u) => u.url)).toEqual(['http://a.test/logo.png']);
    expect(rejected).toEqual({ 'out-of-scope': 1, 'trap.repeated-path': 1 });
  });

  it('logs the rule that decided each URL with filter.debug, and nothing without it', async () => {
    const log = logger();
    const f = new UrlFilterService(
      new MemoryStateStore(),
      loadConfig({ URL_FILTER_DEBUG: 'true' }, { 'filter.scope': 'any', 'filter.maxPagesPerHost': 1 }),
      log,
      noPlugins(),
    );
    f.onModuleInit();
    const first = await f.filter([link('ftp://a.test/'), link('http://a.test/photo.jpg'), link('http://A.test/1'), link('http://a.test/2')]);
    f.passedOn(first);
    await f.filter([link('http://A.test/1')]);
    const lines = log.info.mock.calls.map(([fields]) => fields);
    expect(lines).toEqual([
      { event: 'url-filter-decision', url: 'ftp://a.test/', rule: 'scheme' },
      { event: 'url-filter-decision', url: 'http://a.test/photo.jpg', rule: 'extension' },
      { event: 'url-filter-decision', url: 'http://A.test/1', canonical: 'http://a.test/1', rule: 'accept' },
      { event: 'url-filter-decision', url: 'http://a.test/2', rule: 'host-budget' },
      { event: 'url-filter-decision', url: 'http://A.test/1', rule: 'repeat' },
    ]);

    const quiet = logger();
    const g = new UrlFilterService(new MemoryStateStore(), loadConfig({}, { 'filter.scope': 'any' }), quiet, noPlugins());
    await g.filter([link('http://a.test/1'), link('ftp://a.test/')]);
    expect(quiet.info).not.toHaveBeenCalled();
  });
});
