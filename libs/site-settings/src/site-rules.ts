import { parseSitePattern, patternMatches, SitePattern } from './site-pattern';
import { FILE_ONLY, SiteSettings, SiteSettingsSchema } from './site-settings.schema';

export interface SiteRule {
  pattern: SitePattern;
  settings: SiteSettings;
  /** `file:line:column` of its entry, for a rule read from a file. */
  at?: string;
}

/** A host's settings, and the patterns that gave them (most specific first). */
export interface ResolvedSite {
  settings: SiteSettings;
  patterns: string[];
}

/**
 * The settings of `host`: each field from the most specific matching pattern that sets it (an exact host over
 * `*.` domains, a longer domain over a shorter one, a port over none), so `*.example.com` can slow a whole
 * site down while `docs.example.com` keeps its own user agent. Rules are given file first, live ones after:
 * of two rules with one pattern the later one wins whole (a live change replaces the file's entry).
 */
export function resolveSiteSettings(rules: readonly SiteRule[], host: string): ResolvedSite {
  const byPattern = new Map<string, SiteRule>();
  for (const rule of rules) if (patternMatches(rule.pattern, host)) byPattern.set(rule.pattern.text, rule);
  const matching = [...byPattern.values()].sort((a, b) => b.pattern.specificity - a.pattern.specificity);
  const settings: Record<string, unknown> = {};
  for (const rule of [...matching].reverse()) Object.assign(settings, withoutUndefined(rule.settings));
  return { settings: settings as SiteSettings, patterns: matching.map((r) => r.pattern.text) };
}

const withoutUndefined = (o: object) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/** A rule from a pattern and settings as received (the control plane's body); throws an Error naming the field. */
export function siteRule(pattern: string, settings: unknown): SiteRule {
  const parsed = SiteSettingsSchema.safeParse(settings);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const keys = issue.code === 'unrecognized_keys' ? [...issue.path, ...issue.keys] : issue.path;
    throw new Error(`${keys.join('.') || 'settings'}: ${describeIssue(issue)}`);
  }
  return { pattern: parseSitePattern(pattern), settings: parsed.data };
}

/** A rule set live (the control plane's): as siteRule, and without the settings the file alone may hold. */
export function liveSiteRule(pattern: string, settings: unknown): SiteRule {
  const rule = siteRule(pattern, settings);
  const fileOnly = FILE_ONLY.find((key) => key in rule.settings);
  if (fileOnly) throw new Error(`${fileOnly}: set in the site settings file only (SITE_SETTINGS_FILE), not live`);
  return rule;
}

/** A zod issue in words a user of the file understands; an unknown key is told the keys allowed where it stands. */
export function describeIssue(issue: { code: string; message: string; path?: readonly PropertyKey[]; keys?: readonly string[] }): string {
  if (issue.code !== 'unrecognized_keys') return issue.message;
  const nested = issue.path?.filter((p) => typeof p === 'string') ?? [];
  const allowed = nested.length ? keysOf(SiteSettingsSchema.shape[nested[0] as keyof typeof SiteSettingsSchema.shape]) : ALLOWED;
  return allowed.length ? `unknown setting (allowed: ${allowed.join(', ')})` : 'unknown setting';
}

const ALLOWED = Object.keys(SiteSettingsSchema.shape);

/** The keys of the object a field's schema holds (through optional and unions), or none when it holds no object. */
function keysOf(schema: unknown): string[] {
  const s = schema as { shape?: Record<string, unknown>; unwrap?: () => unknown; options?: unknown[] } | undefined;
  if (!s) return [];
  if (s.shape) return Object.keys(s.shape);
  if (s.options) return s.options.flatMap(keysOf);
  return typeof s.unwrap === 'function' ? keysOf(s.unwrap()) : [];
}
