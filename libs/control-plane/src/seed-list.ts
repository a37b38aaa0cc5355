export type SeedParse = { ok: true; url: string } | { ok: false; input: string; reason: string };

/**
 * One seed: a URL, or a bare domain (`example.com`, as in top-sites lists) which becomes its https home page.
 * Blank lines and `#` comments are skipped by `parseSeedList`.
 */
export function parseSeed(input: string): SeedParse {
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
  return { ok: true, url: url.href };
}

export function parseSeedList(text: string): SeedParse[] {
  return text
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim())
    .filter(Boolean)
    .map(parseSeed);
}
