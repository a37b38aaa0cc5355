/** One Allow or Disallow line of the group that applies to the crawler. */
interface Rule {
  /** The path pattern, percent-encoded with upper-case hex digits; `*` any run of characters, a final `$` the end. */
  pattern: string;
  allow: boolean;
}

/**
 * The rules of one robots.txt for one product token, matched against paths: RFC 9309 §2.2 (the group of the
 * token, else the `*` group; groups of one name merged; the longest matching pattern wins, Allow on a tie;
 * no matching rule allows). Read line by line exactly as robots-parser reads them (it keeps the rest of the
 * file: Crawl-delay, sitemaps), so that both agree on which group applies. Built once per file: a check is
 * then a walk of the group's patterns over the path, with no URL parsed.
 */
export class RobotsRules {
  private constructor(private readonly rules: readonly Rule[]) {}

  /** `text` as given to robots-parser, `token` the crawler's product token. */
  static parse(text: string, token: string): RobotsRules {
    const groups = new Map<string, Rule[]>();
    const agents: string[] = [];
    let afterOtherLine = true;
    for (const raw of text.split(/\r\n|\r|\n/)) {
      const hash = raw.indexOf('#');
      const line = hash < 0 ? raw : raw.slice(0, hash);
      const colon = line.indexOf(':');
      if (colon < 0) continue;
      const field = line.slice(0, colon).trim().toLowerCase();
      if (field === '') continue;
      const value = line.slice(colon + 1).trim();
      if (field === 'user-agent') {
        if (afterOtherLine) agents.length = 0;
        if (value) agents.push(groupName(value));
      } else if (field === 'allow' || field === 'disallow' || field === 'crawl-delay') {
        // A group exists once it has a line, even one without a rule: it is then the group that applies.
        for (const agent of agents) {
          const rules = groups.get(agent) ?? [];
          groups.set(agent, rules);
          if (field !== 'crawl-delay' && value) rules.push({ pattern: normaliseEncoding(value), allow: field === 'allow' });
        }
      }
      afterOtherLine = field !== 'user-agent';
    }
    return new RobotsRules(groups.get(groupName(token)) ?? groups.get('*') ?? []);
  }

  /** Whether `path` (path and query, percent-encoded) may be fetched. */
  allows(path: string): boolean {
    const encoded = hexToUpper(path);
    let best: Rule | undefined;
    for (const rule of this.rules) {
      if (best && rule.pattern.length < best.pattern.length) continue;
      if (!matches(rule.pattern, encoded)) continue;
      if (!best || rule.pattern.length > best.pattern.length || (rule.allow && !best.allow)) best = rule;
    }
    return !best || best.allow;
  }
}

/** A user-agent line's name as groups are keyed: lower case, without a `/version`. */
function groupName(userAgent: string): string {
  const lower = userAgent.toLowerCase();
  const slash = lower.indexOf('/');
  return (slash < 0 ? lower : lower.slice(0, slash)).trim();
}

const HEX_ESCAPE = /%[0-9a-fA-F]{2}/g;

function hexToUpper(s: string): string {
  return s.indexOf('%') < 0 ? s : s.replace(HEX_ESCAPE, (m) => m.toUpperCase());
}

/** A pattern as written, percent-encoded like a URL's path (an escape stays one escape). */
function normaliseEncoding(pattern: string): string {
  try {
    return hexToUpper(encodeURI(pattern).replace(/%25/g, '%'));
  } catch {
    return pattern;
  }
}

/**
 * Whether `pattern` matches a prefix of `path` (the whole of it with a final `$`). Tracks every length of
 * `path` the pattern read so far can match, so `*` costs no backtracking.
 */
function matches(pattern: string, path: string): boolean {
  const lengths = new Array<number>(path.length + 1);
  let count = 1;
  lengths[0] = 0;
  for (let p = 0; p < pattern.length; p++) {
    const c = pattern[p];
    if (c === '$' && p + 1 === pattern.length) return lengths[count - 1] === path.length;
    if (c === '*') {
      count = path.length - lengths[0] + 1;
      for (let i = 1; i < count; i++) lengths[i] = lengths[i - 1] + 1;
    } else {
      let next = 0;
      for (let i = 0; i < count; i++) if (lengths[i] < path.length && path[lengths[i]] === c) lengths[next++] = lengths[i] + 1;
      if (next === 0) return false;
      count = next;
    }
  }
  return true;
}
