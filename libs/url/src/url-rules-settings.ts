import { compileUrlRules, UrlRules, type UrlRuleSource, type UrlRulesVerdict } from './url-rules';

/** Where a crawl's user rules are configured (the URL filter's settings of the same names). */
export interface UrlRuleSettings {
  readonly include: readonly string[];
  readonly exclude: readonly string[];
  readonly rulesFile?: string;
}

/**
 * The rules of the settings, each with its origin: `URL_FILTER_INCLUDE` (or `--include`) and
 * `URL_FILTER_EXCLUDE` (or `--exclude`), then the rules file's lines (`include RULE`, `exclude RULE`, `#`
 * comments). A file that cannot be read, or a line that is neither, throws an Error naming it.
 */
export function userRuleSources(settings: UrlRuleSettings, readFile: (path: string) => string): UrlRuleSource[] {
  const sources: UrlRuleSource[] = [];
  settings.include.forEach((text, i) => sources.push({ kind: 'include', text, origin: `URL_FILTER_INCLUDE (--include) rule ${i + 1}` }));
  settings.exclude.forEach((text, i) => sources.push({ kind: 'exclude', text, origin: `URL_FILTER_EXCLUDE (--exclude) rule ${i + 1}` }));
  if (settings.rulesFile === undefined) return sources;
  const file = settings.rulesFile;
  let content: string;
  try {
    content = readFile(file);
  } catch (error) {
    throw new Error(`URL_FILTER_RULES_FILE: cannot read ${file}: ${(error as Error).message}`);
  }
  content.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const m = /^(include|exclude)\s+(.+)$/.exec(line);
    if (!m) throw new Error(`URL_FILTER_RULES_FILE ${file} line ${i + 1}: expected "include RULE" or "exclude RULE", got ${JSON.stringify(line)}`);
    sources.push({ kind: m[1] as 'include' | 'exclude', text: m[2], origin: `${file} line ${i + 1}` });
  });
  return sources;
}

/**
 * The crawl's user URL rules, compiled; every problem (a rules file that cannot be read, a rule that does not
 * compile or could take catastrophic time, each named by where it was written) is added to `problems`, and
 * the crawl then has no rules: the problems stop it at start.
 */
export function loadUserRules(settings: UrlRuleSettings & { readonly maxUrlLength: number }, readFile: (path: string) => string, problems: string[]): UrlRules {
  try {
    const compiled = compileUrlRules(userRuleSources(settings, readFile), settings.maxUrlLength);
    if (compiled.ok) return compiled.rules;
    problems.push(...compiled.problems);
  } catch (error) {
    problems.push((error as Error).message);
  }
  return new UrlRules([]);
}

/** A verdict as the debug log and the URL lookup show it: the rule, where it was written, what it says. */
export function describeVerdict(verdict: UrlRulesVerdict): string {
  if (verdict.rejectedAs === 'excluded') return `excluded by ${verdict.rule.origin}: exclude ${verdict.rule.text}`;
  return `not-included: matches none of ${verdict.rules.map((r) => `${r.origin} (include ${r.text})`).join(', ')}`;
}
