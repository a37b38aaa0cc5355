/**
 * Turns an extracted `href` into an absolute URL the way a browser would (DESIGN §3.7): WHATWG URL parsing,
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
  const ref = stripAsciiWhitespace(href);
  if (ref === '') return null;
  const page = parse(pageUrl);
  if (!page) return null;
  const baseRef = baseHref === undefined ? '' : stripAsciiWhitespace(baseHref);
  const base = (baseRef !== '' && parse(baseRef, page)) || page;
  const url = parse(ref, base);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) return null;
  return url.href;
}
