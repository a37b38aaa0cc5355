/**
 * URL canonicalisation for the URL Filter: one spelling per resource, so that URL-seen,
 * job ids and politeness keys agree on what "the same URL" is.
 *
 * WHATWG `new URL` does the standard part (lower-case scheme and host, IDN → punycode, default port removed,
 * dot segments resolved, `%2e` segments too); this module adds the crawler's choices on top.
 */

export type CanonicalResult =
  | {
      ok: true;
      url: string;
      /** hostname[:port], exactly as `URL.host` (the politeness key). */
      host: string;
      /** `url` parsed (the canonicaliser parses it anyway): callers that need its parts read them here. */
      parsed: URL;
    }
  | { ok: false; reason: 'malformed' | 'scheme' | 'credentials' };

export interface CanonicalizeOptions {
  /**
   * Query parameters removed before the URL is compared or fetched. A string matches a key exactly,
   * ignoring case; a RegExp is tested against the key (give it the `i` flag for case-insensitivity).
   * Replaces the default list; extend it with `[...DEFAULT_STRIP_PARAMS, 'ref']`.
   * @defaultValue DEFAULT_STRIP_PARAMS
   */
  stripParams?: readonly (string | RegExp)[];
}

/** Tracking and session parameters: they change the URL, never the page. */
export const DEFAULT_STRIP_PARAMS: readonly (string | RegExp)[] = Object.freeze([
  /^utm_/i,
  'gclid',
  'fbclid',
  'msclkid',
  'dclid',
  'yclid',
  'mc_cid',
  'mc_eid',
  '_ga',
  'jsessionid',
  'phpsessid',
  'sid',
  'sessionid',
  /^aspsessionid/i, // classic ASP appends a random suffix: ASPSESSIONIDQQGQGRDA=…
]);

type KeyMatcher = (key: string) => boolean;

// Compiled once per distinct list; the default list is the common case.
const matcherCache = new WeakMap<readonly (string | RegExp)[], KeyMatcher>();

function compileMatcher(list: readonly (string | RegExp)[]): KeyMatcher {
  const cached = matcherCache.get(list);
  if (cached) return cached;
  const exact = new Set<string>();
  // Drop g/y flags: a stateful lastIndex would make .test() alternate between true and false.
  const patterns = list.flatMap((p) => (typeof p === 'string' ? (exact.add(p.toLowerCase()), []) : [new RegExp(p.source, p.flags.replace(/[gy]/g, ''))]));
  const matcher: KeyMatcher = (key) => exact.has(key.toLowerCase()) || patterns.some((re) => re.test(key));
  matcherCache.set(list, matcher);
  return matcher;
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;
const HEX_DIGIT = /[0-9A-Fa-f]/;

/**
 * Decodes escapes of unreserved characters (RFC 3986 §6.2.2.2: `%7E` ≡ `~`) and upper-cases the hex of the
 * rest (§6.2.2.1). A `%` not followed by two hex digits is left as it is: the server sees the same bytes.
 * A hex digit is not decoded where it would complete such a stray `%` into a new escape (`%%36%31` must not
 * become `%61`, which the next pass would read as `a`): the result is a fixed point and names what the
 * input named.
 */
export function normalizePercentEncoding(s: string): string {
  return s.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string, at: number) => {
    const ch = String.fromCharCode(parseInt(hex, 16));
    if (!UNRESERVED.test(ch)) return `%${hex.toUpperCase()}`;
    // A `%` just before, or `%` + one hex digit: that `%` starts no escape (an escape cannot contain `%`).
    const afterStrayPercent = s[at - 1] === '%' || (s[at - 2] === '%' && HEX_DIGIT.test(s[at - 1]));
    return afterStrayPercent && HEX_DIGIT.test(ch) ? `%${hex.toUpperCase()}` : ch;
  });
}

/** `;jsessionid=…` path parameters (Java servlet URL rewriting) up to the next `;` or `/`. */
const JSESSIONID_PATH_PARAM = /;jsessionid=[^;/]*/gi;

function canonicalQuery(search: string, isStripped: KeyMatcher): string {
  if (search.length <= 1) return '';
  const pairs = search
    .slice(1)
    .split('&')
    .filter((p) => p !== '') // `a=1&&b=2`: empty pairs carry nothing
    .map((p) => {
      const norm = normalizePercentEncoding(p);
      const eq = norm.indexOf('=');
      return { key: eq < 0 ? norm : norm.slice(0, eq), pair: norm };
    })
    .filter(({ key }) => !isStripped(key));
  // Array#sort is stable, so duplicate keys keep their order (`a=2&a=1` may mean a list). Code-unit order,
  // not localeCompare: the result must not depend on the process locale.
  pairs.sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
  return pairs.length ? `?${pairs.map((p) => p.pair).join('&')}` : '';
}

/**
 * Canonical form of `input` (resolved against `base` if given), or why it cannot be crawled.
 * Idempotent: canonicalising a canonical URL returns it unchanged.
 */
export function canonicalize(input: string, base?: string, options: CanonicalizeOptions = {}): CanonicalResult {
  let url: URL;
  try {
    url = new URL(input, base);
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, reason: 'scheme' };
  // userinfo in a crawled URL is either a leaked secret or a phishing trick; neither is ours to send.
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'credentials' };

  // `example.com.` (fully qualified) names the same host as `example.com`; WHATWG keeps the dot.
  const hostname = url.hostname.replace(/\.+$/, '');
  if (hostname === '') return { ok: false, reason: 'malformed' };
  const host = url.port ? `${hostname}:${url.port}` : hostname;

  const path = normalizePercentEncoding(url.pathname).replace(JSESSIONID_PATH_PARAM, '');
  const query = canonicalQuery(url.search, compileMatcher(options.stripParams ?? DEFAULT_STRIP_PARAMS));

  const composed = `${url.protocol}//${host}${path}${query}`;
  // Most links are canonical already: then the parse we have is the canonical URL's.
  if (composed === url.href) return { ok: true, url: url.href, host: url.host, parsed: url };
  // Otherwise re-parse, so that what we return is exactly what WHATWG serialises (and thus a fixed point).
  let out: URL;
  try {
    out = new URL(composed);
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  return { ok: true, url: out.href, host: out.host, parsed: out };
}
