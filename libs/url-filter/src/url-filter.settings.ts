import { z } from 'zod';
import { bool, checkedList, int } from '@crawler/settings';

/** A port (`8080`) or an inclusive range (`8000-8999`) within 1–65535. */
function isPortRange(text: string): boolean {
  const match = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(text);
  return match !== null && +match[1] >= 1 && +match[1] <= +(match[2] ?? match[1]) && +(match[2] ?? match[1]) <= 65535;
}

/** `config.filter`: scope, user URL rules, traps, ports, budgets (assembled by @crawler/config). */
export const urlFilterSettings = z.object({
  /**
   * Which links are followed: the seed's host, its registrable domain, the allowlist, or any.
   * @defaultValue 'domain'
   */
  scope: z.enum(['host', 'domain', 'allowlist', 'any']).default('domain').meta({ env: 'URL_FILTER_SCOPE' }),
  /**
   * Registrable domains (and their subdomains) followed with scope 'allowlist' (comma-separated).
   * @defaultValue []
   */
  allowedDomains: z.array(z.string()).default([]).meta({ env: 'URL_FILTER_ALLOWED_DOMAINS', read: 'list' }),
  /** Links followed from a seed at most. @defaultValue 10 */
  maxDepth: int(0).default(10).meta({ env: 'URL_FILTER_MAX_DEPTH' }),
  /** Longer URLs are dropped (they are mostly traps). @defaultValue 2048 */
  maxUrlLength: int(16).default(2048).meta({ env: 'URL_FILTER_MAX_URL_LENGTH' }),
  /** File extensions never fetched (comma-separated); empty = the built-in list. */
  blockedExtensions: z.array(z.string()).optional().meta({ env: 'URL_FILTER_BLOCKED_EXTENSIONS', read: 'list' }),
  /**
   * Query parameters removed during canonicalisation (comma-separated; `utm_*` style prefixes allowed); empty = the
   * built-in tracking and session list.
   */
  stripParams: z.array(z.string()).optional().meta({ env: 'URL_FILTER_STRIP_PARAMS', read: 'list' }),
  /**
   * User URL rules that let URLs through, one a line: `[host-pattern ]matcher`, where the matcher is a path glob
   * (`/docs/**`), a URL glob (`https://*.example.com/**`), `re:REGEX` (on the whole URL) or `path-re:REGEX` (on the
   * path and query). A URL whose host some include rules apply to must match one of them. Seeds are exempt; see
   * [user URL rules](crawl-config.md#a-docs-site-crawl-with-includeexclude-rules).
   * @defaultValue none
   */
  include: z.array(z.string()).default([]).meta({ env: 'URL_FILTER_INCLUDE', read: 'lines' }),
  /**
   * User URL rules that drop URLs, one a line, written as `URL_FILTER_INCLUDE`'s; an exclude rule wins over every
   * include rule. Seeds are exempt.
   * @defaultValue none
   */
  exclude: z.array(z.string()).default([]).meta({ env: 'URL_FILTER_EXCLUDE', read: 'lines' }),
  /**
   * A file of user URL rules read at start, one a line: `include RULE` or `exclude RULE` (`#` comments), on top of
   * `URL_FILTER_INCLUDE` and `URL_FILTER_EXCLUDE`.
   */
  rulesFile: z.string().min(1).optional().meta({ env: 'URL_FILTER_RULES_FILE' }),
  /** A file of blocked domains (one a line, `#` comments; a domain blocks its subdomains), re-read while running. */
  blocklistFile: z.string().min(1).optional().meta({ env: 'URL_FILTER_BLOCKLIST_FILE' }),
  /** How often the blocklist file is checked for changes. @defaultValue 10000 */
  blocklistReloadMs: int(100).default(10_000).meta({ env: 'URL_FILTER_BLOCKLIST_RELOAD_MS' }),
  /** URLs with more query parameters than this are dropped (a trap sign). @defaultValue 12 */
  maxQueryParams: int(0).default(12).meta({ env: 'URL_FILTER_MAX_QUERY_PARAMS' }),
  /**
   * A path segment (or run of segments) repeated more than this many times in a row marks a trap: /a/b/a/b/a/b.
   * @defaultValue 2
   */
  maxPathRepeats: int(1).default(2).meta({ env: 'URL_FILTER_MAX_PATH_REPEATS' }),
  /**
   * Ports that may be fetched, comma-separated ports and ranges; the Fetch standard's bad ports (25, 6000…) are
   * refused whatever this says. A port named alone here is let through `URL_FILTER_BLOCKED_PORTS`.
   * @defaultValue 80,443,1024-65535
   */
  allowedPorts: checkedList(isPortRange, 'is not a port or range (8080, 8000-8999)').default(['80', '443', '1024-65535']).meta({ env: 'URL_FILTER_ALLOWED_PORTS' }),
  /**
   * More ports refused although allowed, comma-separated ports and ranges, on top of the built-in infrastructure list
   * (Redis, MinIO, PostgreSQL…) and the crawler's own ports (those of `REDIS_URL`, `S3_URL`, `RECORDS_URL`, `PORT`),
   * which no setting empties: a port named alone in `URL_FILTER_ALLOWED_PORTS` is the only way through (see
   * [URL filter rules](#url-filter-rules)).
   * @defaultValue none beyond the built-in list
   */
  blockedPorts: checkedList(
    isPortRange,
    'is not a port or a range (8000-8999); the built-in list cannot be emptied: name a port alone in URL_FILTER_ALLOWED_PORTS to open it',
  )
    .optional()
    .meta({ env: 'URL_FILTER_BLOCKED_PORTS' }),
  /**
   * Calendar-like URLs (a year, year/month or date in the path or query) further than this many days from today are
   * dropped.
   * @defaultValue 366
   */
  calendarWindowDays: int(1).default(366).meta({ env: 'URL_FILTER_CALENDAR_WINDOW_DAYS' }),
  /** Link batches filtered at once per process. @defaultValue 64 */
  concurrency: int(1).default(64).meta({ env: 'URL_FILTER_CONCURRENCY' }),
  /** URLs admitted per host at most; 0 = no budget. @defaultValue 100000 */
  maxPagesPerHost: int(0).default(100_000).meta({ env: 'URL_FILTER_MAX_PAGES_PER_HOST' }),
  /**
   * Links a filter process remembers having passed on lately (16 B each, by fingerprint, allocated up front: 16 MiB
   * at the default): found again, they are dropped at once, as URL-seen would drop them, without canonicalising
   * them again; 0 = remember none.
   * @defaultValue 1000000
   */
  recentUrls: int(0).default(1_000_000).meta({ env: 'URL_FILTER_RECENT_URLS' }),
  /**
   * Log every URL's decision with the rule that made it (`url-filter-decision`, one line per URL: for tracing a
   * rule, not for a whole crawl); see [URL filter rules](#url-filter-rules).
   * @defaultValue false
   */
  debug: bool.default(false).meta({ env: 'URL_FILTER_DEBUG' }),
});
