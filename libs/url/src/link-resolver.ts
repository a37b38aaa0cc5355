/**
 * Turns an extracted `href` into an absolute URL the way a browser would: WHATWG URL parsing,
 * `<base href>` honoured, and only links a crawler can follow kept.
 */

// HTML "strip leading and trailing ASCII whitespace" (TAB, LF, FF, CR, SPACE) as done to attribute URLs.
const ASCII_WHITESPACE_EDGES = /^[\t\n\f\r ]+|[\t\n\f\r ]+$/g;

function stripAsciiWhitespace(s: string): string {
  return s.replace(ASCII_WHITESPACE_EDGES, '');
}

function parse(input: string, base?: string | URL): URL | null {
  try {
    return new URL(input, base);
  } catch {
    return null;
  }
}

/**
 * The absolute http(s) URL that `href` on `pageUrl` points to, fragment included (the canonicaliser drops
 * it), or `null` when there is nothing to crawl: an empty href (a link to the page itself), an
 * unparseable one, or any scheme other than http/https (`javascript:`, `mailto:`, `tel:`, `data:`, `ftp:`,
 * `about:`, `blob:`, `file:`…).
 *
 * `baseHref` is the document's `<base href>`: it is itself resolved against `pageUrl`, and ignored if that
 * fails (HTML's "fallback base URL"). A base with another scheme is used as a browser would; the links it
 * produces are then dropped by the scheme rule.
 */
export function resolveLink(href: string, pageUrl: string, baseHref?: string): string | null {
  return new LinkResolver(pageUrl, baseHref).resolve(href);
}

/**
 * Characters a root-relative href may hold and be joined to its origin as it is: no whitespace, no
 * character WHATWG would percent-encode in a path, query or fragment of an http(s) URL, no backslash (a
 * slash to WHATWG), and no '%' (an escaped dot is a dot segment to WHATWG).
 */
const PLAIN_ROOT_RELATIVE = /^\/[A-Za-z0-9\-._~!$&()*+,;=:@/?#]*$/;
/** A "." or ".." path segment, which WHATWG resolves away. */
const DOT_SEGMENT = /(^|\/)\.\.?(\/|$)/;

/**
 * resolveLink for the links of one page: the page URL and `<base href>` are parsed once, and the most
 * common link, a plain root-relative path (`/section/page?id=3`), is joined to the base's origin without
 * parsing at all (its WHATWG resolution is exactly that join: the spec tests hold the two together), and an
 * absolute link to the base's origin with such a path is answered as it is.
 */
export class LinkResolver {
  private readonly base: URL | null;
  /** `scheme://host[:port]` of an http(s) base without credentials, for the plain-path join. */
  private readonly origin: string | null;

  constructor(pageUrl: string, baseHref?: string) {
    const page = parse(pageUrl);
    const baseRef = baseHref === undefined ? '' : stripAsciiWhitespace(baseHref);
    this.base = page && ((baseRef !== '' && parse(baseRef, page)) || page);
    const web = this.base && (this.base.protocol === 'http:' || this.base.protocol === 'https:');
    // A base with credentials keeps them in what it resolves: the join would drop them.
    this.origin = web && !this.base!.username && !this.base!.password ? `${this.base!.protocol}//${this.base!.host}` : null;
  }

  resolve(href: string): string | null {
    if (!this.base) return null;
    const ref = stripAsciiWhitespace(href);
    if (ref === '') return null;
    if (this.origin) {
      if (ref.charCodeAt(0) === 47 && ref.charCodeAt(1) !== 47 && isPlainPath(ref)) return this.origin + ref;
      // An absolute link to the base's own origin, spelled as WHATWG serialises it, with a plain path: itself.
      if (ref.charCodeAt(this.origin.length) === 47 && ref.startsWith(this.origin) && isPlainPath(ref.slice(this.origin.length))) return ref;
    }
    const url = parse(ref, this.base);
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) return null;
    return url.href;
  }
}

/** Whether a root-relative href is joined to its origin as it is (WHATWG would change nothing in it). */
function isPlainPath(ref: string): boolean {
  return PLAIN_ROOT_RELATIVE.test(ref) && !DOT_SEGMENT.test(pathOf(ref));
}

/** The path part of a root-relative href (before its query or fragment). */
function pathOf(ref: string): string {
  const end = ref.search(/[?#]/);
  return end < 0 ? ref : ref.slice(0, end);
}
