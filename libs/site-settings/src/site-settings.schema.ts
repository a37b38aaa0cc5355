import { z } from 'zod';
import { SeedCookiesSchema } from './seed-cookies';

/**
 * Request headers a site may not set: the ones the crawler writes itself (the user agent has its own field,
 * the decoding and the conditional requests are the crawler's), those that frame the request or the
 * connection, and `cookie`, which the site's cookie jar writes.
 */
const RESERVED_HEADERS: Record<string, string> = {
  'user-agent': 'set userAgent instead',
  'accept-encoding': 'the crawler decodes only what it asks for',
  'if-none-match': 'the crawler sends it for a page it has',
  'if-modified-since': 'the crawler sends it for a page it has',
  cookie: "set cookies instead (the site's cookie jar writes this header)",
  host: 'it frames the request',
  'content-length': 'it frames the request',
  'transfer-encoding': 'it frames the request',
  connection: 'it belongs to the connection',
  'keep-alive': 'it belongs to the connection',
  upgrade: 'it belongs to the connection',
  te: 'it belongs to the connection',
  trailer: 'it belongs to the connection',
  'proxy-authorization': 'it belongs to a proxy, and proxies are not supported yet',
  'proxy-connection': 'it belongs to a proxy, and proxies are not supported yet',
};

/** An HTTP field name (RFC 9110 token) and a value with no line break or control character. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_VALUE = /^[^\u0000-\u0008\u000a-\u001f\u007f]*$/;

const headers = z
  .record(z.string(), z.string().max(8192).regex(HEADER_VALUE, 'a header value may not hold a line break or a control character'))
  .superRefine((all, ctx) => {
    for (const name of Object.keys(all)) {
      if (!HEADER_NAME.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: `"${name}" is not a header name` });
      const reserved = RESERVED_HEADERS[name.toLowerCase()];
      if (reserved) ctx.addIssue({ code: 'custom', path: [name], message: `"${name}" may not be set here: ${reserved}` });
    }
  });

/** Settings later work fills: refused by name rather than ignored, so a file that needs them does not crawl without them. */
const notYet = (what: string) =>
  z
    .unknown()
    .refine(() => false, `${what} is not supported yet (a later release); remove it, the crawl would run without it`)
    .optional();

/**
 * One site's settings. Every field is optional: a host takes each field from the most specific pattern that sets
 * it (see resolveSiteSettings), and what no pattern sets stays the crawl's.
 */
export const SiteSettingsSchema = z
  .object({
    /** The least delay between two requests to one host of the site, ms; robots.txt's Crawl-delay and slow answers still lengthen it. */
    minDelayMs: z.number().int().min(0).max(86_400_000).optional(),
    /** Pages fetched per host of the site at most; its other URLs are dropped (`frontier.site-budget`). */
    maxPages: z.number().int().min(1).optional(),
    /** Links followed this many levels from a seed at most on the site's hosts (`frontier.site-depth`). */
    maxDepth: z.number().int().min(0).max(1000).optional(),
    /** The User-Agent sent to the site's hosts (robots.txt is still read for the crawler's own, DOWNLOADER_USER_AGENT). */
    userAgent: z.string().min(1).max(512).regex(HEADER_VALUE, 'a user agent may not hold a line break or a control character').optional(),
    /** Extra request headers sent to the site's hosts (`Accept-Language`, `Authorization`…). */
    headers: headers.optional(),
    concurrency: notYet('concurrency (requests in flight per host)'),
    render: notYet('render (per-site rendering)'),
    /** Cookies sent to the site's hosts from the first request on (a logged-in crawl): see SeedCookiesSchema. */
    cookies: SeedCookiesSchema.optional(),
    proxy: notYet('proxy'),
    tls: notYet('tls'),
  })
  .strict();

/** Fields the schema names only to refuse them. */
export const NOT_SUPPORTED_YET: readonly string[] = ['concurrency', 'render', 'proxy', 'tls'];

export type SiteSettings = Omit<z.output<typeof SiteSettingsSchema>, 'concurrency' | 'render' | 'proxy' | 'tls'>;

/** The settings file: `sites`, a map from site pattern to settings. */
export const SiteSettingsFileSchema = z.object({ sites: z.record(z.string(), SiteSettingsSchema) }).strict();
