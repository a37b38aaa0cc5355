/** A host as canonical URLs spell it: lower-case letters, digits, dots and hyphens, then an optional port. */
const PLAIN_HOST = /^[a-z0-9.-]+(?::[0-9]{1,5})?$/;

/**
 * `new URL(url).host` (hostname[:port], the politeness key), read off the string when `url` is spelled as
 * canonical URLs are: the frontier asks it of every queued URL, and a parse is ten times the cost. Anything
 * the string alone cannot answer for certain (an IP address, an IDN, upper case, a default port written
 * out, no path) is parsed, and a URL the parser refuses throws as it would.
 */
export function hostOf(url: string): string {
  const start = url.startsWith('https://') ? 8 : url.startsWith('http://') ? 7 : 0;
  const end = start ? url.indexOf('/', start) : -1;
  if (end > start) {
    const host = url.slice(start, end);
    if (PLAIN_HOST.test(host) && !host.includes('xn--') && !endsInNumber(host) && plainPort(host, start === 8 ? 443 : 80)) return host;
  }
  return new URL(url).host;
}

/** A last label that starts with a digit: the URL parser may read the host as an IPv4 address (`0x7f.1`). */
function endsInNumber(host: string): boolean {
  const name = host.replace(/:[0-9]+$/, '').replace(/\.$/, '');
  const code = name.charCodeAt(name.lastIndexOf('.') + 1);
  return code >= 0x30 && code <= 0x39;
}

/** No port, or one the parser keeps as written: in range, not the scheme's default, no leading zero. */
function plainPort(host: string, defaultPort: number): boolean {
  const colon = host.indexOf(':');
  if (colon < 0) return true;
  const port = host.slice(colon + 1);
  return port[0] !== '0' && Number(port) <= 65535 && Number(port) !== defaultPort;
}
