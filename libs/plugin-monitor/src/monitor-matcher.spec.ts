import { loadPluginConfig } from '@crawler/plugin-sdk';
import { compileWatches, findMatches, monitoredText, snippetOf, termRegex } from './monitor-matcher';
import { monitorPlugin } from './monitor.plugin';

describe('monitor matching', () => {
  const watches = (terms: string[], patterns: string[] = []) =>
    compileWatches(
      terms,
      patterns.map((p) => new RegExp(p, 'iu')),
    );

  it('finds a term in any case, as a whole word only', () => {
    expect(findMatches('We love ACME products.', watches(['acme']))).toEqual([{ term: 'acme', kind: 'term', matched: 'ACME', index: 8 }]);
    expect(findMatches('acmewidgets and subacme', watches(['acme']))).toEqual([]);
    expect(findMatches('acme_corp', watches(['acme']))).toEqual([]);
    expect(findMatches('(Acme)', watches(['acme']))).toHaveLength(1);
    expect(findMatches('acme2', watches(['acme']))).toEqual([]);
  });

  it('treats letters of every script as word characters (JavaScript’s \\b is ASCII-only)', () => {
    const text = 'Съешь же ещё этих мягких французских булок';
    expect(findMatches(text, watches(['съешь']))).toMatchObject([{ matched: 'Съешь', index: 0 }]);
    expect(findMatches(text, watches(['булок']))).toHaveLength(1);
    expect(findMatches(text, watches(['була']))).toEqual([]);
    expect(findMatches(text, watches(['франц']))).toEqual([]);
    expect(findMatches('Übermut überall', watches(['ÜBERALL']))).toMatchObject([{ matched: 'überall' }]);
  });

  it('matches a phrase across any whitespace, and escapes regex characters of a term', () => {
    expect(findMatches('Acme\n  Corp.', watches(['acme corp']))).toMatchObject([{ matched: 'Acme\n  Corp' }]);
    expect(findMatches('price a.b', watches(['a.b']))).toHaveLength(1);
    expect(findMatches('price axb', watches(['a.b']))).toEqual([]);
    expect(termRegex('c++').test('I like c++ a lot')).toBe(true);
  });

  it('matches patterns case-insensitively, one match (the first) per term or pattern', () => {
    const found = findMatches('Order ACME-12 then acme-99; acme', watches(['acme'], ['acme-\\d+']));
    expect(found).toEqual([
      { term: 'acme', kind: 'term', matched: 'ACME', index: 6 },
      { term: 'acme-\\d+', kind: 'pattern', matched: 'ACME-12', index: 6 },
    ]);
  });

  it('builds a snippet of ±60 characters, whitespace collapsed, marked where cut', () => {
    const text = `${'a'.repeat(100)} TARGET ${'b'.repeat(100)}`;
    const snip = snippetOf(text, 101, 6);
    expect(snip).toBe(`…${'a'.repeat(59)} TARGET ${'b'.repeat(59)}…`);
    expect(snippetOf('short  \n text here', 7, 4)).toBe('short text here');
    expect(snippetOf(`${'x'.repeat(10)}HIT`, 10, 3)).toBe('xxxxxxxxxxHIT');
    expect(monitoredText({ title: ' The  title ', text: 'body\n text' })).toBe(' The title body text');
  });

  it('never cuts a snippet inside a surrogate pair', () => {
    const text = `${'😀'.repeat(40)}HIT`;
    const snip = snippetOf(text, 80, 3);
    expect(snip.startsWith('…😀')).toBe(true);
    expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(snip)).toBe(false);
  });
});

describe('monitor settings', () => {
  it('reads comma-separated terms and patterns as a JSON array or one per line', () => {
    const config = loadPluginConfig(monitorPlugin, { PLUGIN_MONITOR_TERMS: ' Acme , Acme Corp,,', PLUGIN_MONITOR_PATTERNS: '["acme-\\\\d+", "foo|bar"]' });
    expect(config.terms).toEqual(['Acme', 'Acme Corp']);
    expect(config.patterns.map((p) => p.source)).toEqual(['acme-\\d+', 'foo|bar']);
    expect(config.patterns[0].flags).toBe('iu');
    expect(loadPluginConfig(monitorPlugin, { PLUGIN_MONITOR_PATTERNS: 'a,b\nc{2}' }).patterns.map((p) => p.source)).toEqual(['a,b', 'c{2}']);
    expect(loadPluginConfig(monitorPlugin, {})).toMatchObject({ terms: [], patterns: [], webhookTimeoutMs: 10000 });
  });

  it('stops at boot on a pattern that does not compile, naming the variable and the pattern', () => {
    expect(() => loadPluginConfig(monitorPlugin, { PLUGIN_MONITOR_PATTERNS: '["ok", "acme(corp"]' })).toThrow(
      /PLUGIN_MONITOR_PATTERNS: invalid regular expression \/acme\(corp\//,
    );
    expect(() => loadPluginConfig(monitorPlugin, { PLUGIN_MONITOR_PATTERNS: 'x*' })).toThrow(/PLUGIN_MONITOR_PATTERNS: .*matches the empty string/);
    expect(() => loadPluginConfig(monitorPlugin, { PLUGIN_MONITOR_PATTERNS: '["unclosed' })).toThrow(/PLUGIN_MONITOR_PATTERNS: not a JSON array/);
    expect(() => loadPluginConfig(monitorPlugin, { PLUGIN_MONITOR_PATTERNS: '[1]' })).toThrow(/PLUGIN_MONITOR_PATTERNS/);
  });

  it('stops at boot on a bad webhook URL or timeout', () => {
    expect(() => loadPluginConfig(monitorPlugin, { PLUGIN_MONITOR_WEBHOOK_URL: 'not a url' })).toThrow(/PLUGIN_MONITOR_WEBHOOK_URL: must be an http/);
    expect(() => loadPluginConfig(monitorPlugin, { PLUGIN_MONITOR_WEBHOOK_URL: 'ftp://x.test/' })).toThrow(/PLUGIN_MONITOR_WEBHOOK_URL: must be an http/);
    expect(() => loadPluginConfig(monitorPlugin, { PLUGIN_MONITOR_WEBHOOK_TIMEOUT_MS: '5' })).toThrow(/PLUGIN_MONITOR_WEBHOOK_TIMEOUT_MS/);
  });
});
