import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { getDomain } from 'tldts';

/**
 * How far a crawl may wander from its seeds (the URL Filter's scope check):
 * - `host`: the seed's hostname only (any port);
 * - `domain`: the seed's registrable domain (eTLD+1 by the Public Suffix List), all its subdomains;
 * - `allowlist`: the configured domains and their subdomains, whatever the seeds (a seed outside the list
 *   is out of scope too);
 * - `any`: the whole web.
 */
export type Scope = 'host' | 'domain' | 'allowlist' | 'any';

/**
 * The registrable domain ("eTLD+1") of a hostname, using the Public Suffix List including its private
 * section, so that `alice.github.io` and `bob.github.io` are different sites.
 *
 * Falls back to the hostname itself where there is no registrable domain: IP addresses (`127.0.0.1`,
 * `[::1]`), single labels (`localhost`) and bare suffixes (`co.uk`).
 *
 * Unknown TLDs follow the PSL's default rule `*` (the TLD is a one-label public suffix), so the local test
 * web behaves like the real one: `site-001.test` → `site-001.test` and `a.b.site-001.test` →
 * `site-001.test`.
 */
export function registrableDomain(hostname: string): string {
  let domain = knownDomains.get(hostname);
  if (domain === undefined) {
    const host = hostname.toLowerCase().replace(/\.+$/, '');
    domain = getDomain(host, { allowPrivateDomains: true }) ?? host;
    // Asked once a page and once a link about the same few thousand hosts: the suffix-list walk is
    // remembered, and the memory forgotten whole when it reaches its bound rather than kept in order.
    if (knownDomains.size >= KNOWN_DOMAINS_MAX) knownDomains.clear();
    knownDomains.set(hostname, domain);
  }
  return domain;
}

/** Hostnames whose registrable domain registrableDomain remembers, at most. */
const KNOWN_DOMAINS_MAX = 50_000;
const knownDomains = new Map<string, string>();

/** A URL object as is, a string parsed; null when it does not parse. */
export function toUrl(url: URL | string): URL | null {
  if (typeof url !== 'string') return url;
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

/**
 * The key a seed registers for its scope, and that a candidate URL must match: the hostname for `host`
 * (and for `allowlist`, where it is matched against the list with `matchesDomain`, never registered), the
 * registrable domain for `domain`, `null` for `any` (nothing to register).
 * @throws TypeError if `url` is a string that does not parse: callers pass canonical URLs.
 */
export function scopeKey(url: URL | string, scope: Scope): string | null {
  if (scope === 'any') return null;
  const parsed = toUrl(url);
  if (!parsed) throw new TypeError(`scopeKey: not a valid URL: ${String(url)}`);
  return scope === 'domain' ? registrableDomain(parsed.hostname) : parsed.hostname;
}

/**
 * Whether `url` lies inside the crawl: for `host`/`domain`/`allowlist` its key must be one `allowedKeys`
 * accepts (e.g. `set.has` over the seeds' keys; for `allowlist`, `(host) => matchesDomain(host, list)`).
 * An unparseable URL is never in scope.
 */
export function inScope(url: URL | string, scope: Scope, allowedKeys: (key: string) => boolean): boolean {
  const parsed = toUrl(url);
  if (!parsed) return false;
  const key = scopeKey(parsed, scope);
  return key === null || allowedKeys(key);
}

/**
 * A configured domain in the form hostnames are compared in: lower case, IDN as punycode, no trailing dot,
 * a leading `*.` or `.` dropped (a domain always covers its subdomains). Null when it is not a host name
 * (a URL, a path, a port, spaces…), so configuration can name the bad entry.
 */
export function normalizeDomain(text: string): string | null {
  const name = text
    .trim()
    .replace(/^\*?\./, '')
    .replace(/\.+$/, '');
  if (name === '' || name.includes('..') || /[\s/\\:@?#*]/.test(name)) return null;
  const ascii = domainToASCII(name);
  return ascii === '' ? null : ascii;
}

/**
 * Whether `hostname` is one of `domains` or a subdomain of one (`blog.a.test` matches `a.test`; `xa.test`
 * does not; an IP address matches only itself). `domains` holds normalised names (see normalizeDomain).
 * One set lookup per label.
 */
export function matchesDomain(hostname: string, domains: ReadonlySet<string>): boolean {
  if (domains.size === 0) return false;
  let name = hostname.toLowerCase().replace(/\.+$/, '');
  if (isIP(name)) return domains.has(name);
  for (;;) {
    if (domains.has(name)) return true;
    const dot = name.indexOf('.');
    if (dot < 0) return false;
    name = name.slice(dot + 1);
  }
}
