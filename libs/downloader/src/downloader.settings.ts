import { z } from 'zod';
import { bool, int, ms } from '@crawler/settings';
import { proxyUrlProblem } from '@crawler/site-settings';

/** `config.downloader`: timeouts, limits, robots.txt, cookies, proxy (assembled by @crawler/config). */
export const downloaderSettings = z.object({
  /** This downloader's name on the hash ring; unique per process. @defaultValue host name, pid and a random suffix */
  id: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .optional()
    .meta({ env: 'DOWNLOADER_ID' }),
  /** Heartbeat period on the hash ring; a downloader silent for 3 periods has left. @defaultValue 2000 */
  heartbeatMs: int(100).default(2000).meta({ env: 'DOWNLOADER_HEARTBEAT_MS' }),
  /**
   * Fetches in flight per downloader process (never more than one per host), each counted until its body is staged
   * and its outcome sent (`STAGING_LINGER_MS`).
   * @defaultValue 256
   */
  concurrency: int(1).default(256).meta({ env: 'DOWNLOADER_CONCURRENCY' }),
  /**
   * Sent with every request; keep a URL explaining the crawler in it.
   * @defaultValue 'crawler-bot/0.1 (+https://github.com/crawler/crawler/blob/main/docs/for-site-owners.md)'
   */
  userAgent: z
    .string()
    .min(3)
    // An HTTP field value: visible characters, spaces and tabs. A CR or LF would end the header early (every
    // request, robots.txt's included, would then fail), and other control characters are refused by servers.
    .regex(/^[\t\x20-\x7e\x80-\xff]+$/, 'must be a valid HTTP header value: no line breaks or other control characters')
    .refine((value) => value.trim() === value, 'must not start or end with white space')
    .default('crawler-bot/0.1 (+https://github.com/crawler/crawler/blob/main/docs/for-site-owners.md)')
    .meta({ env: 'DOWNLOADER_USER_AGENT' }),
  /** Time allowed to open a connection. @defaultValue 10000 */
  connectTimeoutMs: int(1).default(10_000).meta({ env: 'DOWNLOADER_CONNECT_TIMEOUT_MS' }),
  /**
   * Addresses of a name one fetch tries at most, the first included. The resolver keeps every address of a name
   * the crawl may reach (A and AAAA records, IPv4 first; refused ones dropped); when connecting to one fails
   * (refused, unreachable, DOWNLOADER_CONNECT_TIMEOUT_MS), the fetch moves on to the next, within the same total
   * timeout. An answer, a TLS failure or a reset after connecting ends the fetch as before; through a proxy only
   * the first address is tried. 1 = only the first. @defaultValue 3
   */
  maxAddressTries: int(1).max(16).default(3).meta({ env: 'DOWNLOADER_MAX_ADDRESS_TRIES' }),
  /** Time allowed until the response headers arrive. @defaultValue 15000 */
  headersTimeoutMs: int(1).default(15_000).meta({ env: 'DOWNLOADER_HEADERS_TIMEOUT_MS' }),
  /** Longest silence allowed while the body streams. @defaultValue 15000 */
  bodyTimeoutMs: int(1).default(15_000).meta({ env: 'DOWNLOADER_BODY_TIMEOUT_MS' }),
  /** A fetch is abandoned after this long in all, however the bytes trickle in. @defaultValue 60000 */
  totalTimeoutMs: int(1).default(60_000).meta({ env: 'DOWNLOADER_TOTAL_TIMEOUT_MS' }),
  /**
   * A body arriving slower than this (bytes per second, averaged over `DOWNLOADER_MIN_RATE_WINDOW_MS`) is cut off
   * as `timeout-rate`, long before the total timeout; 0 = no minimum.
   * @defaultValue 1024
   */
  minBytesPerSecond: int(0).default(1024).meta({ env: 'DOWNLOADER_MIN_BYTES_PER_SECOND' }),
  /**
   * The window the minimum transfer rate is measured over; no body is cut before its first window ends.
   * @defaultValue 10000
   */
  minRateWindowMs: int(100).default(10_000).meta({ env: 'DOWNLOADER_MIN_RATE_WINDOW_MS' }),
  /** Response headers larger than this are refused (a protocol error). @defaultValue 16384 */
  maxHeaderBytes: int(1024).default(16_384).meta({ env: 'DOWNLOADER_MAX_HEADER_BYTES' }),
  /** Bodies are cut (and marked truncated) at this size. @defaultValue 262144 */
  maxBodyBytes: int(1024)
    .default(256 * 1024)
    .meta({ env: 'DOWNLOADER_MAX_BODY_BYTES' }),
  /** robots.txt answers are cached this long. @defaultValue 86400000 */
  robotsCacheTtlMs: ms.default(86_400_000).meta({ env: 'DOWNLOADER_ROBOTS_CACHE_TTL_MS' }),
  /**
   * Longest wait between two tries of a robots.txt that could not be fetched (5xx, 429, network): the ceiling of
   * the backoff and of its Retry-After.
   * @defaultValue 600000
   */
  robotsErrorTtlMs: ms.default(600_000).meta({ env: 'DOWNLOADER_ROBOTS_ERROR_TTL_MS' }),
  /**
   * First wait after a robots.txt could not be fetched; doubled (±25% jitter) at each failure after.
   * @defaultValue 60000
   */
  robotsRetryMs: int(1).default(60_000).meta({ env: 'DOWNLOADER_ROBOTS_RETRY_MS' }),
  /**
   * A robots.txt still unreachable this long after its first failure is given up: its host is set aside
   * (`robots-unreachable`).
   * @defaultValue 1800000
   */
  robotsUnreachableMaxMs: ms.default(1_800_000).meta({ env: 'DOWNLOADER_ROBOTS_UNREACHABLE_MAX_MS' }),
  /** robots.txt bytes parsed at most (RFC 9309 asks for at least 500 KiB). @defaultValue 512000 */
  robotsMaxBytes: int(1024).default(512_000).meta({ env: 'DOWNLOADER_ROBOTS_MAX_BYTES' }),
  /**
   * Redirect hops followed for a page (each hop goes back through the filter) and for robots.txt (across hosts,
   * each new host's address vetted by the resolver).
   * @defaultValue 5
   */
  maxRedirects: int(0).max(20).default(5).meta({ env: 'DOWNLOADER_MAX_REDIRECTS' }),
  /**
   * Keep the cookies sites set and send them back, as a browser does: one jar per registrable site (RFC 6265:
   * Domain, Path, Secure, expiry; never a public suffix, so no cookie crosses sites), in the state store so that
   * every downloader replica shares it, at most 50 cookies a site and 4096 bytes a cookie. false: every
   * `Set-Cookie` is ignored; the cookies of the site settings are still sent. robots.txt never sends nor keeps any.
   * @defaultValue true
   */
  cookies: bool.default(true).meta({ env: 'DOWNLOADER_COOKIES' }),
  /**
   * A cookie a site set without an expiry (a session cookie) is kept this long after the site last set a cookie;
   * a site's jar lives as long as its longest-lived cookie, 400 days at most.
   * @defaultValue 86400000
   */
  sessionCookieMs: int(1000).default(86_400_000).meta({ env: 'DOWNLOADER_SESSION_COOKIE_MS' }),
  /**
   * A proxy every request goes through, `http://[user:password@]host:port`: each request (robots.txt's too) is
   * tunnelled with CONNECT to the address the resolver vetted, so the address policy and politeness still apply to
   * the site, never to the proxy; the proxy's own address is not checked. A site's `proxy` in `SITE_SETTINGS_FILE`
   * overrides it (`none`: straight to the site). Credentials are never logged. `crawl --proxy URL` sets it.
   * Absent = no proxy.
   */
  proxyUrl: z
    .string()
    .superRefine((text, ctx) => {
      const problem = proxyUrlProblem(text, { credentials: true });
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .optional()
    .meta({ env: 'DOWNLOADER_PROXY_URL', secret: true }),
  /**
   * A file (a mounted secret) holding `user:password` for `DOWNLOADER_PROXY_URL`, instead of putting them in the URL;
   * surrounding white space is ignored. Read by the downloader at start.
   */
  proxyCredentialsFile: z.string().min(1).optional().meta({ env: 'DOWNLOADER_PROXY_CREDENTIALS_FILE' }),
});

/** `config.sitemaps`: the downloader finds and reads them (assembled by @crawler/config). */
export const sitemapsSettings = z.object({
  /**
   * Where sitemaps are found: robots.txt `Sitemap:` lines (`robots`), those or else /sitemap.xml (`robots+probe`),
   * or nowhere (`off`).
   * @defaultValue 'robots+probe'
   */
  mode: z.enum(['off', 'robots', 'robots+probe']).default('robots+probe').meta({ env: 'SITEMAP_MODE' }),
  /** A sitemap body (after gunzip) is read up to this size. @defaultValue 10485760 */
  maxBytes: int(1024)
    .default(10 * 1024 * 1024)
    .meta({ env: 'SITEMAP_MAX_BYTES' }),
  /** URLs taken from one sitemap at most (the protocol's own limit is 50000). @defaultValue 50000 */
  maxUrls: int(1).default(50_000).meta({ env: 'SITEMAP_MAX_URLS' }),
});
