/** The two indexing directives a crawler acts on (others, like noarchive or max-snippet, are ignored). */
export interface RobotsDirectives {
  noindex: boolean;
  nofollow: boolean;
}

/** Directives whose value follows a colon, so `name:` is not a user-agent scope. */
const VALUED_DIRECTIVES = new Set(['unavailable_after', 'max-snippet', 'max-image-preview', 'max-video-preview']);
/** `<user-agent>: <directive>` as in `googlebot: noindex`. */
const SCOPED = /^([a-z*][\w.*-]*)\s*:\s*(.*)$/is;

/**
 * Tokens of a robots meta `content` or one directive list: comma- (or, leniently, space-) separated,
 * case-insensitive; `none` means both noindex and nofollow.
 */
export function parseRobotsDirectives(content: string): RobotsDirectives {
  const found: RobotsDirectives = { noindex: false, nofollow: false };
  for (const token of content.toLowerCase().split(/[\s,]+/)) {
    if (token === 'noindex' || token === 'none') found.noindex = true;
    if (token === 'nofollow' || token === 'none') found.nofollow = true;
  }
  return found;
}

/**
 * The `X-Robots-Tag` response header. Unscoped directives apply to every crawler; a `name:` prefix scopes
 * the directives after it (up to the next prefix) to that crawler, and those are obeyed only for `*` or
 * for `botName` (our User-Agent product token, compared case-insensitively) — `googlebot: noindex` is
 * not addressed to us. Repeated headers arrive comma-joined, so an unscoped header that follows a scoped
 * one reads as part of that scope (the header syntax cannot tell them apart); this errs towards crawling.
 */
export function parseXRobotsTag(value?: string, botName?: string): RobotsDirectives {
  const found: RobotsDirectives = { noindex: false, nofollow: false };
  if (!value) return found;
  const us = botName?.toLowerCase();
  let scope: string | undefined; // undefined: all crawlers
  for (const part of value.split(',')) {
    let directives = part.trim();
    const scoped = SCOPED.exec(directives);
    if (scoped && !VALUED_DIRECTIVES.has(scoped[1].toLowerCase())) {
      scope = scoped[1].toLowerCase();
      directives = scoped[2];
    }
    if (scope !== undefined && scope !== '*' && scope !== us) continue;
    const d = parseRobotsDirectives(directives);
    found.noindex ||= d.noindex;
    found.nofollow ||= d.nofollow;
  }
  return found;
}
