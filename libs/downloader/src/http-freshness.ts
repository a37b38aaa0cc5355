/** What a response's caching headers say about refetching it (RFC 9111), for the recrawl schedule. */
export interface HttpFreshness {
  /** The end of its freshness lifetime (ms since epoch), when that lies ahead: no refetch before it. */
  freshUntil?: number;
  /**
   * `Cache-Control: no-store`: no copy of it may be kept to revalidate, so its validators (ETag,
   * Last-Modified) are not kept either, and its next fetch is unconditional.
   */
  noStore: boolean;
}

/**
 * Reads `Cache-Control` (`no-store`, `no-cache`, `max-age`) with `Age`, then `Expires`, as a private cache
 * would (the crawler's own archive is no HTTP cache, so `s-maxage` and `private` say nothing to it):
 * - `no-store`: nothing kept (see HttpFreshness.noStore), no lifetime;
 * - `no-cache`: kept, but stale at once: no lifetime;
 * - `max-age=N`: fresh for N seconds less its `Age`, whatever `Expires` says (RFC 9111 §5.3);
 * - else `Expires`, when it parses and lies ahead (one that does not parse means already stale).
 */
export function httpFreshness(headers: Readonly<Record<string, string | undefined>>, now: number): HttpFreshness {
  const directives = cacheControl(headers['cache-control'] ?? '');
  if (directives.has('no-store')) return { noStore: true };
  if (directives.has('no-cache')) return { noStore: false };
  const maxAge = seconds(directives.get('max-age'));
  if (maxAge !== undefined) {
    const lifetimeMs = (maxAge - (seconds(headers.age) ?? 0)) * 1000;
    return lifetimeMs > 0 ? { freshUntil: now + lifetimeMs, noStore: false } : { noStore: false };
  }
  const expires = Date.parse(headers.expires ?? '');
  return expires > now ? { freshUntil: expires, noStore: false } : { noStore: false };
}

/** Directive → argument (`''` when it has none), names in lower case; the first of a repeated one counts. */
function cacheControl(value: string): Map<string, string> {
  const directives = new Map<string, string>();
  for (const part of value.split(',')) {
    const [name, ...arg] = part.split('=');
    const key = name.trim().toLowerCase();
    if (key && !directives.has(key))
      directives.set(
        key,
        arg
          .join('=')
          .trim()
          .replace(/^"(.*)"$/, '$1'),
      );
  }
  return directives;
}

/** A delta-seconds value (digits only), or undefined. */
function seconds(value: string | undefined): number | undefined {
  return value !== undefined && /^\d{1,10}$/.test(value.trim()) ? Number(value.trim()) : undefined;
}
