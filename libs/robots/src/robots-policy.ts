import robotsParser from 'robots-parser';
import { normalizePercentEncoding } from '@crawler/url';
import { productToken } from './product-token';
import { RobotsRules } from './robots-rules';

/** RFC 9309 §2.5: a parsing limit, if any, must be at least 500 KiB; what lies beyond it is ignored. */
export const DEFAULT_ROBOTS_MAX_BYTES = 512_000;

/** What `isAllowed` consults: the parsed file, or a blanket answer. */
export type RobotsKind = 'parsed' | 'allow-all' | 'disallow-all';

/**
 * How the robots.txt fetch ended (RFC 9309 §2.3.1), for logs and cache TTLs:
 * `fetched` (2xx), `unavailable` (3xx left after the redirect limit, 4xx: no rules → allow all),
 * `unreachable` (5xx, 429, network error: assume complete disallow until a retry succeeds).
 */
export type RobotsOutcome = 'fetched' | 'unavailable' | 'unreachable';

export interface RobotsPolicyOptions {
  /** Bytes of the body that are parsed; the rest is ignored. @defaultValue DEFAULT_ROBOTS_MAX_BYTES */
  maxBytes?: number;
}

/** What a cache stores: the response itself, re-parsed on load (parsing is cheap, the format is stable). */
export interface RobotsPolicyJson {
  v: 1;
  /** HTTP status, or null when the server could not be reached at all. */
  status: number | null;
  /** The body as served, cut to maxBytes; null when there was none. */
  body: string | null;
  robotsUrl: string;
  userAgent: string;
  maxBytes: number;
}

type Robot = ReturnType<typeof robotsParser>;

/**
 * Cuts `text` to at most `maxBytes` of UTF-8 at the end of its last complete line: a rule cut mid-line
 * could grant more than the file does (`Allow: /` out of `Allow: /public/`).
 */
function truncateToLines(text: string, maxBytes: number): { text: string; truncated: boolean } {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return { text, truncated: false };
  const bytes = Buffer.from(text, 'utf8');
  let end = maxBytes;
  if (bytes[end] !== 0x0a && bytes[end] !== 0x0d) {
    end = Math.max(bytes.lastIndexOf(0x0a, end - 1), bytes.lastIndexOf(0x0d, end - 1)) + 1;
  }
  return { text: bytes.subarray(0, end).toString('utf8'), truncated: true };
}

/**
 * RFC 9309 §2.2.2 compares paths percent-normalised: `Disallow: /%7Euser/` matches `/~user/`. robots-parser
 * compares octets, and our URLs are canonical (escaped unreserved characters decoded), so such a rule would
 * never match and we would crawl what the site forbids. Both sides are therefore normalised alike: rule
 * values here, URLs in `matchForm`.
 */
const RULE_LINE = /^([ \t]*(?:dis)?allow[ \t]*:)(.*)$/gim;

function normalizeRules(text: string): string {
  return text.replace(RULE_LINE, (_, field: string, value: string) => field + normalizePercentEncoding(value));
}

const ESCAPED_DOT = /%2e/i;

/** The URL as rules are matched against it: path and query percent-normalised like the rules. */
function matchForm(u: URL): string {
  return `${u.protocol}//${u.host}${normalizePercentEncoding(u.pathname + u.search)}`;
}

function checkPositiveInt(value: number, what: string): number {
  if (!Number.isInteger(value) || value <= 0) throw new TypeError(`RobotsPolicy: ${what} must be a positive integer, got ${value}`);
  return value;
}

function pathOf(url: string | URL): string | null {
  try {
    return (typeof url === 'string' ? new URL(url) : url).pathname;
  } catch {
    return null;
  }
}

/**
 * One origin's robots.txt rules for one crawler, built from how the fetch ended (RFC 9309 §2.3.1). The file
 * is read by robots-parser (Crawl-delay, sitemaps) and, line by line the same way, into the group that
 * applies to us (`RobotsRules`: longest match wins, Allow wins ties, `*` and `$`, groups merged, product
 * token compared case-insensitively), which answers each check from the URL's path with no parse of its own.
 */
export class RobotsPolicy {
  private constructor(
    readonly kind: RobotsKind,
    readonly outcome: RobotsOutcome,
    /** Whether the body was longer than maxBytes (the tail was ignored). */
    readonly truncated: boolean,
    private readonly json: RobotsPolicyJson,
    private readonly robot: Robot | null,
    private readonly token: string,
    /** The rules that apply to us (parsed files only), and the origin they are for. */
    private readonly rules: RobotsRules | null = null,
    private readonly origin: URL | null = null,
  ) {}

  /**
   * The policy for a completed fetch of `robotsUrl`: 2xx → the body's rules; 3xx (redirects exhausted) and
   * 4xx → allow all; 5xx → disallow all. 429 counts as unreachable, not as 4xx: the server asked us to slow
   * down, and reading that as "crawl everything" would be the opposite of polite (Google does the same).
   * Other statuses are treated as unreachable too.
   * @throws TypeError on a non-integer status, or, for 2xx, an invalid robotsUrl or a userAgent without a
   *   product token (configuration errors: better loud than silently allowing everything).
   */
  static fromResponse(status: number, body: string | null, robotsUrl: string, userAgent: string, options: RobotsPolicyOptions = {}): RobotsPolicy {
    if (!Number.isInteger(status)) throw new TypeError(`RobotsPolicy: status must be an integer, got ${status}`);
    const maxBytes = checkPositiveInt(options.maxBytes ?? DEFAULT_ROBOTS_MAX_BYTES, 'maxBytes');
    const json = (b: string | null): RobotsPolicyJson => ({ v: 1, status, body: b, robotsUrl, userAgent, maxBytes });

    if (status >= 200 && status < 300) {
      const token = productToken(userAgent);
      if (token === '') throw new TypeError(`RobotsPolicy: no product token in user agent ${JSON.stringify(userAgent)}`);
      if (pathOf(robotsUrl) === null) throw new TypeError(`RobotsPolicy: not a valid robots.txt URL: ${robotsUrl}`);
      // A UTF-8 BOM would glue itself to the first line's name ("\uFEFFUser-agent") and lose that group.
      const { text, truncated } = truncateToLines((body ?? '').replace(/^\uFEFF/, ''), maxBytes);
      const normalized = normalizeRules(text);
      return new RobotsPolicy(
        'parsed',
        'fetched',
        truncated,
        json(text),
        robotsParser(robotsUrl, normalized),
        token,
        RobotsRules.parse(normalized, token),
        new URL(robotsUrl),
      );
    }
    if (status >= 300 && status < 500 && status !== 429) {
      return new RobotsPolicy('allow-all', 'unavailable', false, json(null), null, '');
    }
    return new RobotsPolicy('disallow-all', 'unreachable', false, json(null), null, '');
  }

  /** The server could not be reached (DNS, connect, TLS, timeout): disallow all until a retry succeeds. */
  static unreachable(robotsUrl = '', userAgent = ''): RobotsPolicy {
    const json: RobotsPolicyJson = { v: 1, status: null, body: null, robotsUrl, userAgent, maxBytes: DEFAULT_ROBOTS_MAX_BYTES };
    return new RobotsPolicy('disallow-all', 'unreachable', false, json, null, '');
  }

  /**
   * Rebuilds a policy stored with `toJSON()`.
   * @throws TypeError if `value` is not such a record (a corrupt cache entry: refetch instead).
   */
  static fromJSON(value: unknown): RobotsPolicy {
    const v = value as Partial<RobotsPolicyJson> | null;
    const valid =
      typeof v === 'object' &&
      v !== null &&
      v.v === 1 &&
      (v.status === null || Number.isInteger(v.status)) &&
      (v.body === null || typeof v.body === 'string') &&
      typeof v.robotsUrl === 'string' &&
      typeof v.userAgent === 'string' &&
      Number.isInteger(v.maxBytes);
    if (!valid) throw new TypeError(`RobotsPolicy.fromJSON: not a stored robots policy: ${JSON.stringify(value)?.slice(0, 200)}`);
    const j = v as RobotsPolicyJson;
    return j.status === null
      ? RobotsPolicy.unreachable(j.robotsUrl, j.userAgent)
      : RobotsPolicy.fromResponse(j.status, j.body, j.robotsUrl, j.userAgent, { maxBytes: j.maxBytes });
  }

  toJSON(): RobotsPolicyJson {
    return { ...this.json };
  }

  get robotsUrl(): string {
    return this.json.robotsUrl;
  }

  get status(): number | null {
    return this.json.status;
  }

  /**
   * Whether the crawler may fetch `url`, an absolute URL of this policy's origin.
   * `/robots.txt` itself is always allowed (RFC 9309 §2.2.2).
   *
   * For a URL of another origin the file says nothing and this returns `true`: callers look the policy up
   * by `robotsCacheKey(url)`, so that cannot happen unless they mix policies up; `appliesTo` is there to
   * assert it. A parsed URL saves parsing it again (the URL filter has one).
   */
  isAllowed(url: string | URL): boolean {
    let u: URL;
    try {
      u = typeof url === 'string' ? new URL(url) : url;
    } catch {
      return this.kind !== 'disallow-all'; // no path, no rule for it
    }
    if (u.pathname === '/robots.txt') return true;
    if (this.kind !== 'parsed') return this.kind === 'allow-all';
    if (u.host !== this.origin!.host || u.protocol !== this.origin!.protocol) return true;
    // An escaped dot decoded by the normalisation could make a dot segment, which a parse of the result would
    // resolve: robots-parser, which parses what it is given, answers such (rare) paths.
    if (ESCAPED_DOT.test(u.pathname)) return (this.robot as Robot).isAllowed(matchForm(u), this.token) ?? true;
    return this.rules!.allows(normalizePercentEncoding(u.pathname + u.search));
  }

  /** Whether `url` has the same scheme, host and port as the robots.txt this policy came from. */
  appliesTo(url: string): boolean {
    try {
      return new URL(url).origin === new URL(this.json.robotsUrl).origin;
    } catch {
      return false;
    }
  }

  /**
   * The Crawl-delay of the group that applies to us, in milliseconds; undefined when there is none or it
   * is not a usable number (negative, infinite). The frontier takes max(this, its own minimum, …).
   */
  crawlDelayMs(): number | undefined {
    const seconds = this.robot?.getCrawlDelay(this.token);
    if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) return undefined;
    return Math.round(seconds * 1000);
  }

  /**
   * Sitemap URLs announced by the file (they apply to every crawler), resolved against the robots.txt URL
   * (a relative `Sitemap: /sitemap.xml` is common), http(s) only, without duplicates.
   */
  sitemaps(): string[] {
    const out = new Set<string>();
    for (const s of this.robot?.getSitemaps() ?? []) {
      try {
        const url = new URL(s, this.json.robotsUrl);
        if (url.protocol === 'http:' || url.protocol === 'https:') out.add(url.href);
      } catch {
        // not a URL: nothing to feed the frontier
      }
    }
    return [...out];
  }
}
