import { isMap, isScalar, isSeq, LineCounter, Node, parseDocument } from 'yaml';
import { parseSitePattern } from './site-pattern';
import { describeIssue, SiteRule } from './site-rules';
import { SiteSettings, SiteSettingsFileSchema } from './site-settings.schema';

/** A settings file that cannot be used: every problem, each with its line, column and field. */
export class SiteSettingsFileError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`${file}: ${problems.length} problem${problems.length > 1 ? 's' : ''}:\n  ${problems.join('\n  ')}`);
    this.name = 'SiteSettingsFileError';
  }
}

/**
 * Reads a site settings file, YAML or JSON (JSON is YAML: one parser, one kind of position), and answers its
 * rules in file order. Anything wrong throws a SiteSettingsFileError listing each problem as
 * `file:line:column: sites."docs.example.com".maxPages: …`, so a user can fix them all in one go.
 */
export function parseSiteSettingsFile(text: string, file: string): SiteRule[] {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  const at = (offset: number | undefined) => {
    const { line, col } = lines.linePos(offset ?? 0);
    return `${file}:${line}:${col}`;
  };
  if (doc.errors.length)
    throw new SiteSettingsFileError(
      file,
      doc.errors.map((e) => `${at(e.pos[0])}: ${e.message.split('\n')[0]}`),
    );
  const parsed = SiteSettingsFileSchema.safeParse(doc.toJS() ?? {});
  const problems: string[] = [];
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const unknown = issue.code === 'unrecognized_keys';
      const path = unknown ? [...issue.path, issue.keys[0]] : issue.path;
      problems.push(`${at(offsetOf(doc.contents, path.map(String), unknown))}: ${fieldName(path.map(String))}: ${describeIssue(issue)}`);
    }
  }
  const rules: SiteRule[] = [];
  const seen = new Map<string, string>();
  for (const [pattern, settings] of Object.entries(parsed.data?.sites ?? asSites(doc.toJS()))) {
    const where = at(offsetOf(doc.contents, ['sites', pattern], true));
    try {
      const parsedPattern = parseSitePattern(pattern);
      const twin = seen.get(parsedPattern.text);
      if (twin !== undefined) problems.push(`${where}: sites."${pattern}": the same hosts as "${twin}" (one entry per site)`);
      seen.set(parsedPattern.text, pattern);
      if (parsed.success) rules.push({ pattern: parsedPattern, settings: settings as SiteSettings, at: where });
    } catch (error) {
      problems.push(`${where}: sites."${pattern}": ${(error as Error).message}`);
    }
  }
  if (problems.length) throw new SiteSettingsFileError(file, problems);
  return rules;
}

/** The `sites` map as written, for checking its patterns even when some settings are wrong. */
function asSites(js: unknown): Record<string, unknown> {
  const sites = (js as { sites?: unknown } | null)?.sites;
  return sites && typeof sites === 'object' && !Array.isArray(sites) ? (sites as Record<string, unknown>) : {};
}

/** `sites."docs.example.com".maxPages`: the field as the user wrote its path. */
function fieldName(path: string[]): string {
  return path.map((key, i) => (i > 0 && /[^\w-]/.test(key) ? `"${key}"` : key)).join('.') || 'file';
}

/** Where the node at `path` starts in the text (its key's position when `key`), or the deepest node found on the way. */
function offsetOf(root: unknown, path: string[], key = false): number | undefined {
  let node = root as Node | null | undefined;
  let offset = node?.range?.[0];
  for (const [i, step] of path.entries()) {
    if (isSeq(node)) {
      // A list's item (a site's cookies): its index is the step.
      node = node.items[Number(step)] as Node | null | undefined;
      if (!node) break;
      offset = node.range?.[0] ?? offset;
      continue;
    }
    if (!isMap(node)) break;
    const pair = node.items.find((p) => (isScalar(p.key) ? String(p.key.value) : String(p.key)) === step);
    if (!pair) break;
    const keyNode = pair.key as Node | null;
    offset = keyNode?.range?.[0] ?? offset;
    if (key && i === path.length - 1) break;
    node = pair.value as Node | null;
    // A field points at its value (the wrong one), a missing value at its key.
    if (i === path.length - 1) offset = node?.range?.[0] ?? offset;
  }
  return offset;
}
