/**
 * robots.txt applies per scheme + host + port (RFC 9309 §2.3): http://a, https://a and http://a:8080 each
 * have their own file, cache entry and policy.
 */

function httpUrl(pageUrl: string | URL, caller: string): URL {
  let url: URL;
  try {
    url = typeof pageUrl === 'string' ? new URL(pageUrl) : pageUrl;
  } catch {
    throw new TypeError(`${caller}: not a valid URL: ${pageUrl}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`${caller}: robots.txt applies to http(s) URLs only: ${pageUrl}`);
  }
  return url;
}

/** `http://site-001.test:8080/a/b?c` → `http://site-001.test:8080/robots.txt` (default ports omitted). */
export function robotsUrlFor(pageUrl: string | URL): string {
  const url = httpUrl(pageUrl, 'robotsUrlFor');
  return `${url.protocol}//${url.host}/robots.txt`;
}

/**
 * A cache key for the origin's robots.txt, safe in Redis keys and job ids (no ':'):
 * `http://site-001.test:8080/x` → `http_site-001.test_8080`, `https://example.com/` → `https_example.com_443`.
 * The port is always spelled out so that one origin has one key. IPv6 colons become '-' (`http_[--1]_80`),
 * which cannot clash: WHATWG writes IPv6 addresses in hex and ':' only.
 */
export function robotsCacheKey(pageUrl: string | URL): string {
  const url = httpUrl(pageUrl, 'robotsCacheKey');
  const scheme = url.protocol.slice(0, -1);
  const port = url.port || (scheme === 'https' ? '443' : '80');
  return `${scheme}_${url.hostname.replace(/:/g, '-')}_${port}`;
}
