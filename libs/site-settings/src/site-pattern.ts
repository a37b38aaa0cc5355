/**
 * A site pattern names the hosts a site's settings apply to: `docs.example.com` (that host), `*.example.com`
 * (example.com and every host under it), either with `:port` (only that port; without one, every port). Matched against the frontier's
 * host key, `hostname[:port]` with the default port left out, as `URL.host` writes it.
 */
export interface SitePattern {
  /** The pattern as written (lower-cased), the key of its settings. */
  text: string;
  /** The hostname, or the domain after `*.`. */
  name: string;
  wildcard: boolean;
  port?: string;
  /** Larger wins when several patterns match one host (see specificity). */
  specificity: number;
}

/**
 * Parses a pattern; throws an Error saying what is wrong. The name is canonicalised as the URL filter does
 * (lower case, IDN → punycode), so `Bücher.example` matches the host the crawl sees, `xn--bcher-kva.example`.
 */
export function parseSitePattern(input: string): SitePattern {
  const text = input.trim().toLowerCase();
  const wildcard = text.startsWith('*.');
  const rest = wildcard ? text.slice(2) : text;
  if (rest.includes('*')) throw new Error(`"${input}": a pattern is a host name, or *. and a domain (e.g. docs.example.com, *.example.com)`);
  let url: URL;
  try {
    url = new URL(`http://${rest}/`);
  } catch {
    throw new Error(`"${input}" is not a host name (e.g. docs.example.com, *.example.com, localhost:8080)`);
  }
  if (/[/?#@\\\s]/.test(rest) || !url.hostname) throw new Error(`"${input}" is not a host name (e.g. docs.example.com, *.example.com, localhost:8080)`);
  const name = url.hostname;
  // The frontier's host keys leave the default port out: `:80` here is every host on its default port.
  const port = url.port || undefined;
  const labels = name.split('.').length;
  // An exact host beats any wildcard that matches it; a longer domain beats a shorter one; a port beats none.
  const specificity = labels * 4 + (wildcard ? 0 : 2) + (port ? 1 : 0);
  return { text: wildcard ? `*.${url.host}` : url.host, name, wildcard, ...(port ? { port } : {}), specificity };
}

/** Whether `host` (`hostname[:port]`, as the frontier keys hosts) is one the pattern names. */
export function patternMatches(pattern: SitePattern, host: string): boolean {
  const [hostname, port] = splitHost(host);
  if (pattern.port !== undefined && pattern.port !== (port ?? '')) return false;
  return pattern.wildcard ? hostname === pattern.name || hostname.endsWith(`.${pattern.name}`) : hostname === pattern.name;
}

function splitHost(host: string): [string, string | undefined] {
  const lower = host.toLowerCase();
  // [::1]:8080 and 127.0.0.1:8080 and example.com: the port is after the last ':' outside brackets.
  const close = lower.lastIndexOf(']');
  const colon = lower.lastIndexOf(':');
  return colon > close && (close >= 0 || lower.indexOf(':') === colon) ? [lower.slice(0, colon), lower.slice(colon + 1)] : [lower, undefined];
}
