import { compileUrlRules, UrlRules, type UrlRuleSource } from './url-rules';
import { loadUserRules, userRuleSources } from './url-rules-settings';

const include = (text: string, n = 1): UrlRuleSource => ({ kind: 'include', text, origin: `include ${n}` });
const exclude = (text: string, n = 1): UrlRuleSource => ({ kind: 'exclude', text, origin: `exclude ${n}` });

function rules(...sources: UrlRuleSource[]): UrlRules {
  const compiled = compileUrlRules(sources, 2048);
  if (!compiled.ok) throw new Error(compiled.problems.join('\n'));
  return compiled.rules;
}

/** What the rules make of a URL: 'in', 'excluded' or 'not-included'. */
const verdict = (r: UrlRules, url: string) => r.judge(new URL(url))?.rejectedAs ?? 'in';

describe('compileUrlRules: globs', () => {
  it('matches a path glob on the path and query: * within a segment, ** across, a trailing /** also the directory itself', () => {
    const r = rules(exclude('/api/*'), exclude('/private/**', 2));
    expect(verdict(r, 'https://a.test/api/users')).toBe('excluded');
    expect(verdict(r, 'https://a.test/api/users?page=2')).toBe('excluded');
    expect(verdict(r, 'https://a.test/api/users/1')).toBe('in');
    expect(verdict(r, 'https://a.test/private')).toBe('excluded');
    expect(verdict(r, 'https://a.test/private/a/b/c')).toBe('excluded');
    expect(verdict(r, 'https://a.test/privateer')).toBe('in');
    expect(verdict(r, 'https://a.test/docs/api/users')).toBe('in');
  });

  it('takes every character but * literally (., ?, + and brackets mean themselves)', () => {
    const r = rules(exclude('/search?q=*'), exclude('/a.b+[c]', 2));
    expect(verdict(r, 'https://a.test/search?q=cats')).toBe('excluded');
    expect(verdict(r, 'https://a.test/searchXq=cats')).toBe('in');
    expect(verdict(r, 'https://a.test/a.b+[c]')).toBe('excluded');
    expect(verdict(r, 'https://a.test/aXb+[c]')).toBe('in');
  });

  it('matches a URL glob on the whole URL, scheme and host included', () => {
    const r = rules(include('https://*.example.com/docs/**'));
    expect(verdict(r, 'https://www.example.com/docs/intro')).toBe('in');
    expect(verdict(r, 'http://www.example.com/docs/intro')).toBe('not-included');
    expect(verdict(r, 'https://www.example.com/blog/')).toBe('not-included');
  });
});

describe('compileUrlRules: regular expressions', () => {
  it('searches re: in the whole URL and path-re: in the path and query, unanchored', () => {
    const r = rules(exclude('re:[?&]sort='), exclude('path-re:^/\\d{4}/', 2));
    expect(verdict(r, 'https://a.test/list?a=1&sort=asc')).toBe('excluded');
    expect(verdict(r, 'https://a.test/list?a=1')).toBe('in');
    expect(verdict(r, 'https://a.test/2024/post')).toBe('excluded');
    expect(verdict(r, 'https://2024.test/post')).toBe('in');
  });
});

describe('compileUrlRules: scope and precedence', () => {
  it('applies a rule with a host pattern to that host only, and *.domain to the domain and its subdomains', () => {
    const r = rules(exclude('docs.a.test /v1/**'), exclude('*.b.test /tmp/**', 2));
    expect(verdict(r, 'https://docs.a.test/v1/x')).toBe('excluded');
    expect(verdict(r, 'https://www.a.test/v1/x')).toBe('in');
    expect(verdict(r, 'https://b.test/tmp/x')).toBe('excluded');
    expect(verdict(r, 'https://x.y.b.test/tmp/x')).toBe('excluded');
    expect(verdict(r, 'https://notb.test/tmp/x')).toBe('in');
  });

  it('asks a URL to match one include rule of its host (or of the whole crawl) only when some apply to it', () => {
    const r = rules(include('docs.a.test /guide/**'), include('docs.a.test /api/**', 2));
    expect(verdict(r, 'https://docs.a.test/guide/start')).toBe('in');
    expect(verdict(r, 'https://docs.a.test/api/x')).toBe('in');
    expect(verdict(r, 'https://docs.a.test/blog/x')).toBe('not-included');
    // No include rule applies to another host: the rules have nothing to say about it.
    expect(verdict(r, 'https://www.a.test/blog/x')).toBe('in');
    const both = rules(include('/docs/**'), include('api.a.test /v2/**', 2));
    expect(verdict(both, 'https://api.a.test/v2/x')).toBe('in');
    expect(verdict(both, 'https://api.a.test/docs/x')).toBe('in');
    expect(verdict(both, 'https://www.a.test/v2/x')).toBe('not-included');
  });

  it('lets an exclude rule win over an include rule that also matches', () => {
    const r = rules(include('/docs/**'), exclude('/docs/old/**'));
    expect(verdict(r, 'https://a.test/docs/new')).toBe('in');
    expect(verdict(r, 'https://a.test/docs/old/page')).toBe('excluded');
    const verdictOf = r.judge(new URL('https://a.test/docs/old/page'));
    expect(verdictOf).toMatchObject({ rejectedAs: 'excluded', rule: { origin: 'exclude 1', text: '/docs/old/**' } });
  });
});

describe('compileUrlRules: refusals', () => {
  const problems = (...sources: UrlRuleSource[]) => {
    const compiled = compileUrlRules(sources, 2048);
    return compiled.ok ? [] : compiled.problems;
  };

  it('refuses a regular expression that does not compile, naming the rule where it was written', () => {
    expect(problems(include('/ok/**'), exclude('re:a(b', 3))).toEqual([expect.stringMatching(/^exclude 3: "re:a\(b": does not compile: .*Unterminated group/)]);
  });

  it('refuses what is not a rule, and a bad host pattern', () => {
    expect(problems(include('docs'))).toEqual([expect.stringContaining('include 1: "docs": not a rule')]);
    expect(problems(include('a.test docs/**'))).toEqual([expect.stringContaining('not a matcher after the host pattern')]);
    expect(problems(include('a/b.test /x'))).toEqual([expect.stringContaining('not a host pattern: "a/b.test"')]);
    expect(problems(include('*.*.test /x'))).toEqual([expect.stringContaining('not a host pattern')]);
  });

  it('refuses a regular expression that could backtrack catastrophically, at the position of its repeated group', () => {
    expect(problems(exclude('re:^(a+)+$', 2))).toEqual([expect.stringMatching(/^exclude 2: .*nested quantifiers\) at position 2/)]);
    expect(problems(exclude('path-re:(?:[a-z]*/)*x'))).toEqual([expect.stringContaining('nested quantifiers) at position 1')]);
    expect(problems(exclude('re:(x{1,9})*y'))).toEqual([expect.stringContaining('nested quantifiers')]);
    expect(problems(exclude('re:(a)\\1'))).toEqual([expect.stringContaining('a back-reference at position 4')]);
  });

  it('refuses a glob whose wildcards would backtrack for too long', () => {
    const stars = `/${'**a'.repeat(8)}b`;
    expect(problems(exclude(stars))).toEqual([expect.stringContaining('catastrophic backtracking')]);
  });

  it('accepts the usual regular expressions of a crawl', () => {
    expect(problems(exclude('re:[?&](sort|order)='), exclude('path-re:^/(en|de)/'), exclude('re:\\.(pdf|zip)$'), exclude('re:/page/[0-9]{3,}'))).toEqual([]);
  });
});

describe('userRuleSources and loadUserRules', () => {
  const files: Record<string, string> = {
    'rules.txt': '# docs only\ninclude /docs/**\n\nexclude re:[?&]sort=\n',
    'bad.txt': 'include /docs/**\nallow /x\n',
  };
  const read = (path: string) => {
    if (!(path in files)) throw new Error('ENOENT: no such file');
    return files[path];
  };

  it('reads the settings, then the file, each rule named by where it was written', () => {
    const sources = userRuleSources({ include: ['/a/**'], exclude: ['/b/**', '/c/**'], rulesFile: 'rules.txt' }, read);
    expect(sources).toEqual([
      { kind: 'include', text: '/a/**', origin: 'URL_FILTER_INCLUDE (--include) rule 1' },
      { kind: 'exclude', text: '/b/**', origin: 'URL_FILTER_EXCLUDE (--exclude) rule 1' },
      { kind: 'exclude', text: '/c/**', origin: 'URL_FILTER_EXCLUDE (--exclude) rule 2' },
      { kind: 'include', text: '/docs/**', origin: 'rules.txt line 2' },
      { kind: 'exclude', text: 're:[?&]sort=', origin: 'rules.txt line 4' },
    ]);
  });

  it('names the file and line of a line that is no rule, and a file that cannot be read', () => {
    const problems: string[] = [];
    const none = loadUserRules({ include: [], exclude: ['re:(('], rulesFile: 'bad.txt', maxUrlLength: 2048 }, read, problems);
    expect(none.size).toBe(0);
    expect(problems).toEqual([expect.stringContaining('URL_FILTER_RULES_FILE bad.txt line 2: expected "include RULE" or "exclude RULE"')]);
    const missing: string[] = [];
    loadUserRules({ include: [], exclude: [], rulesFile: 'gone.txt', maxUrlLength: 2048 }, read, missing);
    expect(missing).toEqual([expect.stringContaining('URL_FILTER_RULES_FILE: cannot read gone.txt: ENOENT')]);
    const compile: string[] = [];
    loadUserRules({ include: [], exclude: ['/ok', 're:(('], maxUrlLength: 2048 }, read, compile);
    expect(compile).toEqual([expect.stringMatching(/^URL_FILTER_EXCLUDE \(--exclude\) rule 2: "re:\(\(": does not compile/)]);
  });
});
