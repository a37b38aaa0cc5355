/**
 * The product token of a User-Agent header: the name robots.txt groups are matched against (RFC 9309
 * §2.2.1). `PoliteCrawler/0.1 (+https://example.org/bot)` → `PoliteCrawler`.
 *
 * It is the text before the first '/' (version) or whitespace (comment); matching it is case-insensitive.
 */
export function productToken(userAgent: string): string {
  return /^[^\s/]*/.exec(userAgent.trim())?.[0] ?? '';
}
