import { PortPolicy } from '@crawler/url';

export type SeedParse = { ok: true; url: string } | { ok: false; input: string; reason: string };

/**
 * One seed: a URL, or a bare domain (`example.com`, as in top-sites lists) which becomes its https home page.
 * Blank lines and `#` comments are skipped by `parseSeedList`. With `ports`, a seed on a port the URL
 * filter refuses is refused here, saying why (the filter would drop it: a crawl of nothing, "complete").
 */
export function parseSeed(input: string, ports?: PortPolicy): SeedParse {
  const text = input.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`;
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
  const port = ports?.refusal(url);
  if (port) return { ok: false, input, reason: port };
  return { ok: true, url: url.href };
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
