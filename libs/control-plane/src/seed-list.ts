import { isIP } from 'node:net';
import { AddressPolicy } from '@crawler/net';
import { PortPolicy } from '@crawler/url';

export type SeedParse = { ok: true; url: string } | { ok: false; input: string; reason: string };

/** The crawl's rules a seed must pass at the door, so that a seed the crawl would refuse later is refused now, saying why. */
export interface SeedRules {
  /** The URL filter's port rule (URL_FILTER_ALLOWED_PORTS, URL_FILTER_BLOCKED_PORTS). */
  ports?: PortPolicy;
  /** The resolver's address rule (DNS_ALLOW_PRIVATE, DNS_ALLOW_CIDRS). */
  addresses?: AddressPolicy;
}

/** `localhost` and the names under it are loopback (RFC 6761 §6.3), whatever any resolver says. */
const LOCALHOST = /(^|\.)localhost\.?$/i;

/** `scheme:` not followed by a port: `javascript:alert(1)`, `data:text/html,…`, `mailto:a@b.test` (but `a.test:8080/x` is a host). */
const OTHER_SCHEME = /^([a-z][a-z0-9+.-]*):(?!\d*(?:[/?#]|$))/i;

/**
 * One seed: a URL, or a bare domain (`example.com`, as in top-sites lists) which becomes its https home page.
 * Blank lines and `#` comments are skipped by `parseSeedList`. With `rules`, a seed on a port the URL filter
 * refuses, or at an address the resolver refuses (a literal IP in any spelling the URL standard reads, such
 * as `0x7f.1` or `[::ffff:127.0.0.1]`, or `localhost`), is refused here with the words the crawl would use:
 * accepted, it would only fail later (a crawl of nothing, "complete"). A name that resolves inside is still
 * refused by the resolver, at every answer.
 */
export function parseSeed(input: string, rules: SeedRules = {}): SeedParse {
  const text = input.trim();
  const scheme = OTHER_SCHEME.exec(text)?.[1].toLowerCase();
  if (scheme && scheme !== 'http' && scheme !== 'https') return { ok: false, input, reason: `scheme ${scheme}: is not http(s)` };
  const withScheme = scheme || /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return { ok: false, input, reason: 'not a URL or domain name' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, input, reason: `scheme ${url.protocol} is not http(s)` };
  if (!url.hostname) return { ok: false, input, reason: 'no host' };
  // The URL filter drops such URLs (libs/url canonicalize: 'credentials'): refused here, with the reason.
  if (url.username || url.password) return { ok: false, input, reason: 'user:password@ in a URL is never sent: give the URL without it' };
  const port = rules.ports?.refusal(url);
  if (port) return { ok: false, input, reason: port };
  const address = rules.addresses && addressRefusal(url.hostname, rules.addresses);
  if (address) return { ok: false, input, reason: address };
  return { ok: true, url: url.href };
}

/** Why the resolver would refuse the host: a literal address it refuses, or localhost when loopback is refused. */
function addressRefusal(hostname: string, policy: AddressPolicy): string | undefined {
  // The URL parser has already turned every spelling of an address into one (0x7f.1 → 127.0.0.1, [::ffff:7f00:1]).
  const literal = hostname.replace(/^\[|\]$/g, '');
  if (isIP(literal)) return policy.refusal(literal);
  if (!LOCALHOST.test(hostname)) return undefined;
  const refusal = policy.refusal('127.0.0.1');
  return refusal && `${hostname} is this machine (127.0.0.1): ${refusal}`;
}

export function parseSeedList(text: string): SeedParse[] {
  return text
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim())
    .filter(Boolean)
    .map((line) => parseSeed(line));
}

/** A POST /seeds body holds at most this many URLs (the server's schema refuses more). */
export const MAX_SEEDS_PER_REQUEST = 100_000;

/**
 * Splits seed URLs into POST /seeds bodies that each fit `maxBytes` (the server's CONTROL_PLANE_MAX_BODY_BYTES)
 * and MAX_SEEDS_PER_REQUEST, in order, so a list of any length can be submitted.
 */
export function seedRequests(urls: string[], maxBytes: number): string[][] {
  const envelope = Buffer.byteLength('{"urls":[]}');
  const requests: string[][] = [];
  let current: string[] = [];
  let bytes = envelope;
  for (const url of urls) {
    const size = Buffer.byteLength(JSON.stringify(url));
    if (envelope + size > maxBytes) throw new Error(`a seed of ${size} bytes does not fit in a request of ${maxBytes} bytes: ${url.slice(0, 80)}…`);
    // Each URL after the first costs its comma too.
    if (current.length && (bytes + size + 1 > maxBytes || current.length >= MAX_SEEDS_PER_REQUEST)) {
      requests.push(current);
      current = [];
      bytes = envelope;
    }
    bytes += current.length ? size + 1 : size;
    current.push(url);
  }
  if (current.length) requests.push(current);
  return requests;
}
