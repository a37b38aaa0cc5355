import { domainToASCII } from 'node:url';
import { regexHazard } from './regex-guard';

/** A user's URL rule as written, and where: `origin` names it in errors and decisions. */
export interface UrlRuleSource {
  readonly kind: 'include' | 'exclude';
  /** `[host-pattern ]matcher`: see compileUrlRules. */
  readonly text: string;
  /** Where it was written: `URL_FILTER_EXCLUDE rule 2`, `rules.txt line 4`, `--include 1`. */
  readonly origin: string;
}

/** A compiled rule. */
export interface UrlRule extends UrlRuleSource {
  /** Whether the rule speaks about this host (a rule without a host pattern speaks about every host). */
  appliesTo(hostname: string): boolean;
  /** Whether the URL matches it. */
  matches(url: URL): boolean;
}

/** What the user rules make of a URL: the exclude rule that matched, or the include rules none of which did. */
export type UrlRulesVerdict = { readonly rejectedAs: 'excluded'; readonly rule: UrlRule } | { readonly rejectedAs: 'not-included'; readonly rules: readonly UrlRule[] };

/**
 * Include and exclude rules by glob or regular expression, on the whole URL or on its path (with its
 * query), each for a host pattern or the whole crawl. A URL is judged by the rules that apply to its host
 * (those without a host pattern always apply):
 * - it is `excluded` when any exclude rule matches it (excludes win over includes);
 * - it is `not-included` when include rules apply to it and none matches;
 * - otherwise the rules have nothing to say.
 */
export class UrlRules {
  private readonly includes: readonly UrlRule[];
  private readonly excludes: readonly UrlRule[];

  constructor(readonly rules: readonly UrlRule[]) {
    this.includes = rules.filter((r) => r.kind === 'include');
    this.excludes = rules.filter((r) => r.kind === 'exclude');
  }

  get size(): number {
    return this.rules.length;
  }

  judge(url: URL): UrlRulesVerdict | undefined {
    const host = url.hostname;
    for (const rule of this.excludes) if (rule.appliesTo(host) && rule.matches(url)) return { rejectedAs: 'excluded', rule };
    const includes = this.includes.filter((r) => r.appliesTo(host));
    if (includes.length === 0 || includes.some((r) => r.matches(url))) return undefined;
    return { rejectedAs: 'not-included', rules: includes };
  }
}

/** The rules compiled, or every problem found (each naming its rule's origin). */
export type CompiledUrlRules = { readonly ok: true; readonly rules: UrlRules } | { readonly ok: false; readonly problems: readonly string[] };

/**
 * Compiles rules written as `[host-pattern ]matcher`:
 * - host pattern: `docs.example.com` (that host only) or `*.example.com` (example.com and its subdomains);
 *   none: the rule applies to every host;
 * - matcher: `/docs/**` a glob on the path and query (it starts with `/`), `https://*.example.com/**` a glob on
 *   the whole URL (it has `://`), `re:REGEX` a regular expression searched in the whole URL, `path-re:REGEX`
 *   one searched in the path and query. In globs `*` is any run of characters but `/`, `**` any run at all
 *   (a trailing `/**` also matches nothing: `/docs/**` matches `/docs`), every other character itself.
 *
 * Rules see URLs in canonical form (lower-case host, default port dropped, tracking parameters gone, query
 * parameters sorted). Each regular expression (and each glob's) is checked by regexHazard against
 * `maxLength` (the longest URL the filter lets through).
 */
export function compileUrlRules(sources: readonly UrlRuleSource[], maxLength: number): CompiledUrlRules {
  const rules: UrlRule[] = [];
  const problems: string[] = [];
  for (const source of sources) {
    try {
      rules.push(compileRule(source, maxLength));
    } catch (error) {
      problems.push(`${source.origin}: ${JSON.stringify(source.text)}: ${(error as Error).message}`);
    }
  }
  return problems.length ? { ok: false, problems } : { ok: true, rules: new UrlRules(rules) };
}

const MATCHER = /^(?:\/|re:|path-re:|[^\s]*:\/\/)/;

function compileRule(source: UrlRuleSource, maxLength: number): UrlRule {
  const text = source.text.trim();
  if (text === '') throw new Error('an empty rule');
  let hostPattern: string | undefined;
  let matcher = text;
  if (!MATCHER.test(text)) {
    const space = text.search(/\s/);
    if (space < 0) throw new Error('not a rule: expected /path-glob, scheme://url-glob, re:REGEX or path-re:REGEX, optionally after a host pattern and a space');
    hostPattern = text.slice(0, space);
    matcher = text.slice(space).trim();
    if (!MATCHER.test(matcher))
      throw new Error(`not a matcher after the host pattern: ${JSON.stringify(matcher)} (expected /path-glob, scheme://url-glob, re:REGEX or path-re:REGEX)`);
  }
  const appliesTo = hostPattern === undefined ? () => true : hostMatcher(hostPattern);
  const onPath = matcher.startsWith('/') || matcher.startsWith('path-re:');
  const isRegex = matcher.startsWith('re:') || matcher.startsWith('path-re:');
  const pattern = isRegex ? matcher.slice(matcher.indexOf(':') + 1) : globSource(matcher);
  let regex: RegExp;
  try {
    regex = new RegExp(pattern);
  } catch (error) {
    throw new Error(`does not compile: ${(error as Error).message}`);
  }
  const hazard = regexHazard(pattern, regex, maxLength);
  if (hazard) throw new Error(`refused: ${isRegex ? '' : 'the glob makes '}${hazard}`);
  const matches = onPath ? (url: URL) => regex.test(url.pathname + url.search) : (url: URL) => regex.test(url.href);
  return { ...source, text, appliesTo, matches };
}

/** `docs.example.com` matches that host; `*.example.com` matches example.com and every subdomain of it. */
function hostMatcher(pattern: string): (hostname: string) => boolean {
  const wildcard = pattern.startsWith('*.');
  const written = (wildcard ? pattern.slice(2) : pattern).toLowerCase().replace(/\.$/, '');
  const name = /[*/:@?#\\[\]]/.test(written) ? '' : domainToASCII(written);
  if (name === '') {
    throw new Error(`not a host pattern: ${JSON.stringify(pattern)} (expected a host name, or *. and a domain)`);
  }
  if (!wildcard) return (hostname) => hostname === name;
  const suffix = `.${name}`;
  return (hostname) => hostname === name || hostname.endsWith(suffix);
}

/** A glob as an anchored regular expression source (see compileUrlRules for the syntax). */
function globSource(glob: string): string {
  const parts: string[] = [];
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (glob.startsWith('/**', i) && i + 3 === glob.length) {
      parts.push('(?:/.*)?');
      break;
    }
    if (glob.startsWith('**', i)) {
      parts.push('.*');
      i++;
    } else if (c === '*') parts.push('[^/]*');
    else parts.push(c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  }
  return `^${parts.join('')}$`;
}
