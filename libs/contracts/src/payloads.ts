import { z } from 'zod';
import { baseQueue, PLUGIN_NAME, pluginQueue, QueueName } from './queues';

/** Bumped on any incompatible payload change; consumers reject other versions to the dead-letter queue. */
export const SCHEMA_VERSION = 1;

const version = z.literal(SCHEMA_VERSION);
/**
 * The longest URL or href a message carries. A longer link travels cut to this many characters with its
 * full `length`, so that the URL filter counts it (`filtered.too-long`) rather than it vanishing unseen.
 */
export const MAX_URL_CHARS = 8192;
const url = z.string().min(1).max(MAX_URL_CHARS);
/** The full length of a link cut to MAX_URL_CHARS. */
const cutLength = z
  .number()
  .int()
  .min(MAX_URL_CHARS + 1)
  .optional();

/** How a URL entered the crawl. */
export const UrlSource = z.enum(['seed', 'link', 'redirect', 'sitemap', 'recrawl']);

/** A sitemap's `<changefreq>` values (sitemaps.org 0.9). */
export const Changefreq = z.enum(['always', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'never']);
export type Changefreq = z.infer<typeof Changefreq>;
export type UrlSource = z.infer<typeof UrlSource>;

/** What a URL is fetched as: a page (HTML, parsed for links) or a sitemap (XML, read for its URLs). */
export const UrlKind = z.enum(['page', 'sitemap']);
export type UrlKind = z.infer<typeof UrlKind>;

export const CrawlUrl = z.object({
  url,
  /** Absent means 'page'. */
  kind: UrlKind.optional(),
  /** Links followed from a seed (seed = 0; a redirect keeps the depth of its source). */
  depth: z.number().int().min(0),
  source: UrlSource,
  /** Redirect hops taken to reach this URL. */
  hops: z.number().int().min(0).default(0),
  /** Sitemap `<priority>` (0…1), when the URL came from a sitemap. */
  priority: z.number().min(0).max(1).optional(),
  /** Sitemap `<lastmod>` (ms since epoch), when the URL came from a sitemap: its first recrawl interval's hint. */
  lastmod: z.number().int().optional(),
  /** Sitemap `<changefreq>`, when the URL came from a sitemap: its first recrawl interval's hint. */
  changefreq: Changefreq.optional(),
  /** Times this URL was answered 429/503 and put back. */
  attempts: z.number().int().min(0).optional(),
  /** Transient failures so far (a 5xx, 408, timeout, reset, refused connection): the retries it was given. */
  failures: z.number().int().min(0).optional(),
  /**
   * The page this URL was found on, kept only where a plugin wants it (a URL a plugin claims, e.g. an image
   * and the page showing it); absent for ordinary links.
   */
  referrer: url.optional(),
  /**
   * Set when the link was longer than MAX_URL_CHARS (its href, or the URL it resolved to): `url` is then
   * its first MAX_URL_CHARS characters, and the URL filter rejects it as `too-long` without judging more.
   */
  length: cutLength,
  /** What the last fetch of this URL left (for a recrawl): validators, body hash, recrawl interval. */
  revisit: z
    .object({
      etag: z.string().max(1024).optional(),
      lastModified: z.string().max(256).optional(),
      bodyHash: z.string().max(128).optional(),
      intervalMs: z.number().int().min(0).optional(),
      /** The page's count of new URLs found on it when this recrawl was scheduled (FRONTIER_RECRAWL_POLICY=hubs). */
      links: z.number().int().min(0).optional(),
    })
    .optional(),
});
export type CrawlUrl = z.infer<typeof CrawlUrl>;

export const UrlBatch = z.object({
  v: version,
  urls: z.array(CrawlUrl).max(10000),
  /** Names the batch so that a redelivered message is enqueued in the frontier only once. */
  batchId: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .max(64)
    .optional(),
});
export type UrlBatch = z.infer<typeof UrlBatch>;

export const FetchRequest = CrawlUrl.extend({
  v: version,
  /** The frontier's lease on this URL: the outcome must name it. */
  leaseId: z.string().min(1),
  /** When the lease runs out (ms since epoch): after that the frontier may give the host to another fetch. */
  leaseExpiresAt: z.number().int().min(0).optional(),
  /** The downloader that owns the host on the hash ring (its fetch queue is `fetchQueue(shard)`). */
  shard: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .optional(),
  /** Stable id of this URL's fetch (a fingerprint of the URL): job ids and staging keys derive from it. */
  fetchId: z.string().regex(/^[A-Za-z0-9_-]+$/),
  /** Politeness key: the URL's host[:port]. */
  host: z.string().min(1),
  /** The address the resolver vetted; the downloader connects to exactly this one first. */
  ip: z.string().optional(),
  /**
   * The host's other addresses the resolver vetted (IPv4 before IPv6), absent when it has one: when the connection
   * to `ip` fails (refused, unreachable, connect timeout), the downloader tries these in order within the same fetch.
   */
  fallbackIps: z.array(z.string()).max(32).optional(),
  /**
   * A robots.txt redirected to another host (RFC 9309 §2.3.1.2): the request goes back through the resolver
   * so that the new host's address is vetted like any other, then on to the same downloader. `ip` is then the
   * address of the hop's host; the rules found at the end of the chain apply to the URL's own host.
   */
  robotsHop: z
    .object({
      /** The robots.txt URL to fetch next. */
      url,
      /** The robots.txt URLs that answered with a redirect so far, in order. */
      chain: z.array(url).max(21),
      /** Set by the resolver when the hop's host did not resolve or its address is refused. */
      refusal: z.string().optional(),
      /** The vetted address of the URL's own host (the outcome reports it, for per-IP pacing). */
      originIp: z.string().optional(),
    })
    .optional(),
  /**
   * The frontier does not know the host's address yet: the resolver answers it back to the frontier (a
   * `resolved` outcome) instead of passing the URL on, so that the per-IP limits hold from the host's first request.
   */
  resolveOnly: z.boolean().optional(),
  /**
   * The gap the frontier paces `ip` at now (FRONTIER_PER_IP_INTERVAL_MS divided by the address's allowance, 0 on a
   * CDN range): the downloader keeps it between its own requests there. Absent: FRONTIER_PER_IP_INTERVAL_MS.
   */
  ipIntervalMs: z.number().int().min(0).optional(),
});
export type FetchRequest = z.infer<typeof FetchRequest>;

/**
 * Why a request got no answer, read by the fetcher from the error's code (never its wording): the frontier
 * retries the kinds that may pass (timeouts, resets, refused connections, protocol errors) and not the others.
 */
export const FetchErrorKind = z.enum([
  'timeout-connect',
  'timeout-headers',
  'timeout-body',
  'timeout-total',
  'timeout-rate',
  'refused',
  'reset',
  'dns',
  'tls',
  'protocol',
  'too-large-headers',
  'decode',
  'unvetted',
  'proxy',
  'other',
]);
export type FetchErrorKind = z.infer<typeof FetchErrorKind>;

/** Why a turn was `deferred`: the host's robots.txt is unreachable, or its name failed to resolve for now. */
export const DeferralCause = z.enum(['robots', 'dns']);
export type DeferralCause = z.infer<typeof DeferralCause>;

export const FetchOutcome = z.object({
  v: version,
  leaseId: z.string().min(1),
  fetchId: z.string(),
  url,
  host: z.string().min(1),
  /** What happened, for the frontier's bookkeeping. */
  /**
   * `skipped`: not attempted (the lease was about to run out), put the URL back.
   * `resolved`: only the host's address was looked up (a `resolveOnly` request): `ip` is it, put the URL back.
   * `deferred`: not attempted because robots.txt could not be fetched ("disallow all for now", RFC 9309), or
   * because the name did not resolve for a reason that may pass (a DNS timeout or server failure): `cause`
   * says which; the host waits `retryAfterMs`, and gives up after the retry limit.
   */
  kind: z.enum(['fetched', 'robots-fetched', 'disallowed', 'error', 'skipped', 'deferred', 'resolved']),
  /**
   * For a `deferred` outcome: why, set by its producer (the downloader: `robots`; the resolver: `dns`).
   * Absent on outcomes queued by a version before it existed.
   */
  cause: DeferralCause.optional(),
  /** Whether a request reached the host this turn (if not, no politeness delay is owed). */
  requested: z.boolean(),
  status: z.number().int().optional(),
  error: z.string().optional(),
  /**
   * For an `error` outcome whose request was sent: what kind of failure — whether it is worth another try, and
   * whether it is a timeout, which counts towards the host's strikes.
   */
  errorKind: FetchErrorKind.optional(),
  /** Time the request took; only a response's time feeds the adaptive delay. */
  durationMs: z.number().min(0),
  /** Crawl-delay announced by the host's robots.txt, if any. */
  crawlDelayMs: z.number().min(0).optional(),
  /**
   * The address the request went to (hosts sharing it are paced together): the one it connected to, a fallback
   * address when the connection to the first failed.
   */
  ip: z.string().optional(),
  /** What a 429/503's Retry-After asked for, in ms. */
  retryAfterMs: z.number().min(0).optional(),
  /** For a `fetched` outcome: the body bytes read (a site's `maxBytes` spends them). Absent: none, or an older producer. */
  bytes: z.number().int().min(0).optional(),
  /** For a fetched HTML page (200 or 304): whether it changed since the last fetch, and its new validators. */
  revisit: z
    .object({
      changed: z.boolean(),
      etag: z.string().max(1024).optional(),
      lastModified: z.string().max(256).optional(),
      bodyHash: z.string().max(128).optional(),
      /**
       * The end of its freshness lifetime, when that lies ahead (`Cache-Control: max-age`, else `Expires`; none
       * with `no-cache` or `no-store`): no refetch before it (ms since epoch).
       */
      expiresAt: z.number().optional(),
    })
    .optional(),
  /** The URL as queued, to put back (robots.txt was this turn, a 429/503, a transient failure to retry). */
  retry: CrawlUrl.optional(),
  /**
   * A turn deferred because the host's robots.txt is unreachable: since when (ms since epoch), how many
   * tries failed, when it is next tried and when it is given up; `giveUp` once that time has come (the host
   * is then set aside).
   */
  robotsUnreachable: z
    .object({
      since: z.number().int().min(0),
      tries: z.number().int().min(0),
      nextTryAt: z.number().int().min(0),
      giveUpAt: z.number().int().min(0),
      giveUp: z.boolean(),
    })
    .optional(),
});
export type FetchOutcome = z.infer<typeof FetchOutcome>;

const headers = z.record(z.string(), z.string());

export const FetchedPage = z.object({
  v: version,
  fetchId: z.string(),
  url,
  /** Absent means 'page'. */
  kind: UrlKind.optional(),
  depth: z.number().int().min(0),
  status: z.number().int(),
  headers,
  contentType: z.string(),
  /** Where the raw body waits (the claim check): a BodyStaging reference, read and released by the stages after. */
  bodyKey: z.string(),
  length: z.number().int().min(0),
  truncated: z.boolean(),
  fetchedAt: z.string(),
  /** The page its URL was found on, when a plugin asks links to carry it (PluginManifest.referrers). */
  referrer: url.optional(),
  /**
   * The plugin that replaced the fetched body before the parser (a page it claimed: PluginManifest
   * `claims.pages`); the stored page records it. Absent: the body is the one fetched.
   */
  via: z.string().regex(PLUGIN_NAME).optional(),
});
export type FetchedPage = z.infer<typeof FetchedPage>;

export const RawLink = z.object({
  href: z.string().max(MAX_URL_CHARS),
  /** Set when the href was longer than MAX_URL_CHARS: `href` is then its first MAX_URL_CHARS characters. */
  length: cutLength,
  /**
   * The element it came from; from a sitemap: 'url' (a page of a urlset) or 'sitemap' (a child of an index).
   * 'img' links are collected only while a plugin is enabled, and followed only when a plugin claims them.
   */
  tag: z.enum(['a', 'area', 'link', 'iframe', 'frame', 'img', 'url', 'sitemap']),
  rel: z.string().optional(),
  /** A sitemap's `<priority>` (0…1). */
  priority: z.number().min(0).max(1).optional(),
  /** A sitemap's `<lastmod>` (ms since epoch). */
  lastmod: z.number().int().optional(),
  /** A sitemap's `<changefreq>`. */
  changefreq: Changefreq.optional(),
});
export type RawLink = z.infer<typeof RawLink>;

export const ParsedPage = FetchedPage.extend({
  charset: z.string(),
  /** How the charset was decided: bom, http, meta, detected, detected-over-declared (a label overruled as plainly wrong), default. */
  charsetSource: z.string(),
  title: z.string().optional(),
  lang: z.string().optional(),
  noindex: z.boolean(),
  nofollow: z.boolean(),
  canonical: z.string().optional(),
  baseHref: z.string().optional(),
  /** SHA-256 of the normalised text, hex: the exact-duplicate key. */
  contentHash: z.string().regex(/^[0-9a-f]{64}$/),
  /** 64-bit simhash of the text's shingles, 16 hex digits: the near-duplicate key. */
  simhash: z.string().regex(/^[0-9a-f]{16}$/),
  links: z.array(RawLink).max(100000),
});
export type ParsedPage = z.infer<typeof ParsedPage>;

export const PageLinks = z.object({
  v: version,
  url,
  /** 'sitemap' when the links are a sitemap's entries (absent means 'page'). */
  kind: UrlKind.optional(),
  depth: z.number().int().min(0),
  baseHref: z.string().optional(),
  nofollow: z.boolean(),
  links: z.array(RawLink).max(100000),
});
export type PageLinks = z.infer<typeof PageLinks>;

const pluginName = z.string().regex(PLUGIN_NAME);
/** `type/subtype` or `type/*`, lower-case, no parameters. */
const mediaRange = z.string().regex(/^[a-z0-9][a-z0-9!#$&^_.+-]*\/([a-z0-9][a-z0-9!#$&^_.+-]*|\*)$/);

/**
 * What a plugin declares: the responses and URLs it claims, whether it wants new parsed pages, and the
 * queue it consumes. Each plugin service registers its manifest at boot (PluginRegistry, libs/plugin-host);
 * core services read the manifests of the plugins named in `PLUGINS`, never a plugin's code.
 */
export const PluginManifest = z
  .object({
    v: version,
    name: pluginName,
    claims: z.object({
      /** Media types sent to the plugin instead of being dropped (`image/png`, `image/*`). HTML always goes to the parser. */
      contentTypes: z.array(mediaRange).max(64).default([]),
      /** URL extensions (`png`) the URL filter no longer blocks and the extractor follows from `<img>` and `<link>`. */
      extensions: z
        .array(z.string().regex(/^[a-z0-9]{1,16}$/))
        .max(64)
        .default([]),
      /** Path globs (`/avatars/*`, `/feeds/**`; `*` = within a segment, `**` = across segments) claimed like extensions. */
      urlPatterns: z
        .array(z.string().regex(/^\/[^\s]{0,255}$/))
        .max(64)
        .default([]),
      /**
       * Path globs (as `urlPatterns`) of HTML pages the plugin takes before the parser: such a page goes to the
       * plugin (hook `fetched`) instead, and the plugin hands it on to the parser (PluginContext.toParser), as
       * fetched or with a body of its own. A page no plugin claims goes straight to the parser.
       */
      pages: z
        .array(z.string().regex(/^\/[^\s]{0,255}$/))
        .max(64)
        .optional(),
      /** Body bytes read for a claimed response (default: DOWNLOADER_MAX_BODY_BYTES); longer is cut and marked truncated. */
      maxBytes: z
        .number()
        .int()
        .min(1024)
        .max(1024 * 1024 * 1024)
        .optional(),
    }),
    /** Send the plugin every new (not duplicate) parsed page, as a PluginPage. */
    pageHook: z.boolean().default(false),
    /**
     * Links carry the page they were found on (CrawlUrl.referrer) to the frontier and on to the page hook
     * (PluginPage.referrer): what a prioritizer learning where links lead needs. Absent means no.
     */
    referrers: z.boolean().optional(),
    /** The queue it consumes: always `plugin.<name>`. */
    queue: z.string(),
  })
  .refine((m) => m.queue === pluginQueue(m.name), { message: 'queue must be plugin.<name>', path: ['queue'] });
export type PluginManifest = z.infer<typeof PluginManifest>;

/** A response of a type the plugin claims, staged by the downloader (claim check), with the page that linked it. */
export const PluginFetched = FetchedPage.extend({
  hook: z.literal('fetched'),
  /** The page the URL was found on, when known (CrawlUrl.referrer). */
  source: url.optional(),
});
export type PluginFetched = z.infer<typeof PluginFetched>;

/**
 * A new (not duplicate) parsed page, for a plugin with a page hook. Compact: the page itself is stored under
 * `contentKey` (compressed, in `charset`); the plugin SDK's `pageText` reads its text from there.
 */
export const PluginPage = z.object({
  v: version,
  hook: z.literal('page'),
  url,
  depth: z.number().int().min(0),
  status: z.number().int(),
  fetchedAt: z.string(),
  contentType: z.string(),
  charset: z.string(),
  title: z.string().optional(),
  lang: z.string().optional(),
  noindex: z.boolean(),
  contentHash: z.string().regex(/^[0-9a-f]{64}$/),
  simhash: z.string().regex(/^[0-9a-f]{16}$/),
  /** The stored page's reference in the page store (PluginContext.pages). */
  contentKey: z.string(),
  /** The page its URL was found on, when a plugin asks for it (PluginManifest.referrers). */
  referrer: url.optional(),
});
export type PluginPage = z.infer<typeof PluginPage>;

/** What a plugin's queue carries. */
export const PluginJob = z.discriminatedUnion('hook', [PluginFetched, PluginPage]);
export type PluginJob = z.infer<typeof PluginJob>;

/** Something a plugin found (an alert, a finding), for whoever consumes `plugin-events.<name>`. */
export const PluginEvent = z.object({
  v: version,
  plugin: pluginName,
  /** What kind of event, in the plugin's own words (`alert`, `stored`…). */
  type: z.string().regex(/^[a-z][a-z0-9.-]{0,63}$/),
  at: z.string(),
  /** The URL it is about, if any. */
  url: url.optional(),
  /** The plugin's own fields (kept small: a claim check, not a body). */
  data: z.record(z.string(), z.unknown()),
});
export type PluginEvent = z.infer<typeof PluginEvent>;

export const DeadLetter = z.object({
  v: version,
  queue: z.string(),
  reason: z.string(),
  payload: z.unknown(),
  at: z.string(),
});
export type DeadLetter = z.infer<typeof DeadLetter>;

/** One payload schema per queue. */
export const QUEUE_SCHEMAS = {
  [QueueName.FrontierAdd]: UrlBatch,
  [QueueName.FrontierDone]: FetchOutcome,
  [QueueName.DnsResolve]: FetchRequest,
  [QueueName.Fetch]: FetchRequest,
  [QueueName.Parse]: FetchedPage,
  [QueueName.ContentSeen]: ParsedPage,
  [QueueName.ExtractLinks]: PageLinks,
  [QueueName.FilterUrls]: UrlBatch,
  [QueueName.SeenUrls]: UrlBatch,
  [QueueName.DeadLetter]: DeadLetter,
  [QueueName.Plugin]: PluginJob,
  [QueueName.PluginEvents]: PluginEvent,
} as const;

/** The payload type of a queue: `JobOf<QueueName.Fetch>` is a FetchRequest. */
export type JobOf<Q extends QueueName> = z.infer<(typeof QUEUE_SCHEMAS)[Q]>;

export class InvalidMessageError extends Error {
  constructor(
    readonly queue: string,
    readonly reason: string,
  ) {
    super(`invalid message on ${queue}: ${reason}`);
    this.name = 'InvalidMessageError';
  }
}

/** Validates a message read from a queue; throws InvalidMessageError naming the offending fields. */
export function decodeJob<Q extends QueueName>(queue: Q, data: unknown): JobOf<Q> {
  const result = QUEUE_SCHEMAS[baseQueue(queue)].safeParse(data);
  if (!result.success) {
    const reason = result.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
      .join('; ');
    throw new InvalidMessageError(queue, reason);
  }
  return result.data as JobOf<Q>;
}
