import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { getPublicSuffix } from 'tldts';
import type { ParsedCookie } from './set-cookie';

/** A cookie as a jar keeps it (RFC 6265 §5.3). */
export interface StoredCookie {
  name: string;
  value: string;
  /** The host (host-only) or the domain it was set for, lower case, punycode, no leading dot. */
  domain: string;
  hostOnly: boolean;
  path: string;
  secure: boolean;
  /** ms since the epoch; absent: kept for the session (the jar decides how long that is). */
  expiresAt?: number;
  /** When it was first set: among cookies of one path length, the older is sent first (§5.4). */
  createdAt: number;
}

/** Cookies kept per registrable site at most (RFC 6265 §6.1 asks for at least 50 per domain). */
export const MAX_COOKIES_PER_SITE = 50;

/** Whether a name is a public suffix (`com`, `co.uk`, `github.io`): no cookie may be set for all of its sites. */
export function isPublicSuffix(name: string): boolean {
  return getPublicSuffix(name, { allowPrivateDomains: true }) === name;
}

/** A cookie's identity in a jar: a later cookie with the same one replaces it (§5.3 step 11). */
export const cookieKey = (cookie: Pick<StoredCookie, 'domain' | 'path' | 'name'>) => `${cookie.domain};${cookie.path};${cookie.name}`;

/**
 * What the response to `url` may store of a parsed cookie (§5.3), or why it may not: a Domain that is a public
 * suffix other than the host itself, or that the host does not domain-match (another site's), or Secure over
 * plain http. A cookie whose expiry has passed is still answered: storing it deletes the one it replaces.
 */
export function storableCookie(parsed: ParsedCookie, url: URL, now: number): StoredCookie | { refused: string } {
  const host = hostnameOf(url);
  let domain = host;
  let hostOnly = true;
  if (parsed.domain !== undefined) {
    const asked = domainToASCII(parsed.domain);
    if (!asked) return { refused: 'its Domain is not a host name' };
    if (isPublicSuffix(asked) && asked !== host) return { refused: `its Domain ${asked} is a public suffix` };
    if (!domainMatches(host, asked)) return { refused: `its Domain ${asked} is not ${host}'s` };
    // A public suffix that is the host itself sets a host-only cookie (§5.3 step 5).
    hostOnly = asked === host;
    domain = asked;
  }
  if (parsed.secure && url.protocol !== 'https:') return { refused: 'it is Secure and came over http' };
  return {
    name: parsed.name,
    value: parsed.value,
    domain,
    hostOnly,
    path: parsed.path ?? defaultPath(url.pathname),
    secure: parsed.secure,
    ...(parsed.expiresAt !== undefined ? { expiresAt: parsed.expiresAt } : {}),
    createdAt: now,
  };
}

/** The cookies of `cookies` a request to `url` sends (§5.4 step 1), in the Cookie header's order (step 2). */
export function cookiesFor(cookies: readonly StoredCookie[], url: URL, now: number): StoredCookie[] {
  const host = hostnameOf(url);
  return cookies
    .filter(
      (c) =>
        (c.hostOnly ? host === c.domain : domainMatches(host, c.domain)) &&
        pathMatches(url.pathname, c.path) &&
        (!c.secure || url.protocol === 'https:') &&
        !isExpired(c, now),
    )
    .sort((a, b) => b.path.length - a.path.length || a.createdAt - b.createdAt);
}

export const isExpired = (cookie: { expiresAt?: number }, now: number) => cookie.expiresAt !== undefined && cookie.expiresAt <= now;

/** The `Cookie` header of these cookies; undefined for none. */
export function cookieHeader(cookies: readonly { name: string; value: string }[]): string | undefined {
  return cookies.length ? cookies.map((c) => `${c.name}=${c.value}`).join('; ') : undefined;
}

/** §5.1.3: the host is the domain, or a name under it; an IP address only itself. */
export function domainMatches(host: string, domain: string): boolean {
  if (host === domain) return true;
  return !isIP(host) && host.endsWith(`.${domain}`);
}

/** §5.1.4. */
export function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith('/') || requestPath[cookiePath.length] === '/';
}

/** §5.1.4: the request path up to its last `/`, `/` when that is the first. */
export function defaultPath(requestPath: string): string {
  if (!requestPath.startsWith('/')) return '/';
  const last = requestPath.lastIndexOf('/');
  return last === 0 ? '/' : requestPath.slice(0, last);
}

/** The URL's hostname as cookies compare it: brackets of an IPv6 address off, no trailing dot. */
function hostnameOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
}
