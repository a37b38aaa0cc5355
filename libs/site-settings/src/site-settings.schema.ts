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
  'proxy-authorization': 'it belongs to the proxy: set proxy.credentialsEnv or proxy.credentialsFile',
  'proxy-connection': 'it belongs to the proxy',
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

/**
 * The most requests a site may have in flight to one of its hosts (`concurrency`). Past a handful at once a
 * crawl is a load test of the site; the bound also catches a typo (100 for 10) before it reaches a server. The
 * downloader keeps up to this many connections open per origin, so that such a site's requests do go at once.
 */
export const SITE_CONCURRENCY_MAX = 16;

/** An environment variable's name (POSIX: letters, digits, underscores, not starting with a digit). */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A proxy's address, `http://host:port`: the crawler tunnels every request through it with CONNECT to the target's
 * vetted address. Credentials never sit in the settings file (it is listed by the control plane and copied around):
 * they come from the variable or file the setting names.
 */
const proxyUrl = z.string().superRefine((text, ctx) => {
  const problem = proxyUrlProblem(text);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** What is wrong with a proxy URL, or undefined. Shared with DOWNLOADER_PROXY_URL's check. */
export function proxyUrlProblem(text: string, { credentials = false } = {}): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not a URL (e.g. http://proxy.internal:3128)';
  }
  if (url.protocol === 'https:') return 'a proxy reached over TLS (https://) is not supported yet: use http:// (https sites are still tunnelled end to end)';
  if (url.protocol !== 'http:') return `must be an http:// URL (e.g. http://proxy.internal:3128), not ${url.protocol}`;
  if (!credentials && (url.username || url.password)) return 'may not hold credentials: name them with credentialsEnv or credentialsFile';
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) return "must be the proxy's address only, http://host:port, with no path";
  return undefined;
}

/** `proxy`: a URL, `none` (no proxy for this site, whatever the crawl's), or a URL with where its credentials are. */
const proxy = z.union([
  z.literal('none'),
  proxyUrl,
  z
    .object({
      /** The proxy, `http://host:port`. */
      url: proxyUrl,
      /** An environment variable of the downloader's holding `user:password` (Basic authentication). */
      credentialsEnv: z.string().regex(ENV_NAME, 'is not an environment variable name').optional(),
      /** A file (a mounted secret) holding `user:password`; surrounding white space is ignored. */
      credentialsFile: z.string().min(1).optional(),
    })
    .strict()
    .refine((p) => !(p.credentialsEnv && p.credentialsFile), 'set credentialsEnv or credentialsFile, not both'),
]);

/** `tls`: how the site's certificates are checked, and the crawler's own certificate for it. */
const tls = z
  .object({
    /** A PEM file of CA certificates trusted for the site, besides Node's bundled ones (a private CA). */
    caFile: z.string().min(1).optional(),
    /**
     * Accept any certificate from the site: anyone on the way can read and change what it serves. Per site only,
     * never the crawl's default; every downloader warns of it when it starts.
     */
    insecureSkipVerify: z.boolean().optional(),
    /** A PEM certificate the crawler presents to the site (mutual TLS); with clientKeyFile. */
    clientCertFile: z.string().min(1).optional(),
    /** The PEM private key of clientCertFile (not encrypted). */
    clientKeyFile: z.string().min(1).optional(),
  })
  .strict()
  .superRefine((t, ctx) => {
    if (!t.clientCertFile !== !t.clientKeyFile) ctx.addIssue({ code: 'custom', message: 'clientCertFile and clientKeyFile go together' });
    if (t.insecureSkipVerify && t.caFile) ctx.addIssue({ code: 'custom', message: 'caFile means nothing with insecureSkipVerify: true (nothing is verified); keep one' });
  });

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
    /**
     * Body bytes fetched per host of the site at most (each host its own count); once a host has had them, its
     * other URLs are dropped (`frontier.site-byte-budget`). Pages in flight then still count.
     */
    maxBytes: z.number().int().min(1).optional(),
    /** Links followed this many levels from a seed at most on the site's hosts (`frontier.site-depth`). */
    maxDepth: z.number().int().min(0).max(1000).optional(),
    /** The User-Agent sent to the site's hosts (robots.txt is still read for the crawler's own, DOWNLOADER_USER_AGENT). */
    userAgent: z.string().min(1).max(512).regex(HEADER_VALUE, 'a user agent may not hold a line break or a control character').optional(),
    /** Extra request headers sent to the site's hosts (`Accept-Language`, `Authorization`…). */
    headers: headers.optional(),
    /**
     * Requests in flight to one host of the site at most, over the crawl's FRONTIER_PER_HOST_LIMIT (either way: a
     * site may be given more or fewer). As with that limit, a due host's requests start together, and the host's
     * delay runs from each completion to the next start (see the frontier's per-host limit).
     */
    concurrency: z.number().int().min(1).max(SITE_CONCURRENCY_MAX).optional(),
    /**
     * The render plugin for the site's HTML pages, over its crawl-wide choice: `false` = never rendered (they go
     * to the parser as fetched), `true` = every one rendered, whatever PLUGIN_RENDER_DETECT and
     * PLUGIN_RENDER_URL_PATTERNS say. Only with `render` in PLUGINS: the crawl refuses `true` without it. From the
     * file only (see FILE_ONLY).
     */
    render: z.boolean().optional(),
    /** Cookies sent to the site's hosts from the first request on (a logged-in crawl): see SeedCookiesSchema. */
    cookies: SeedCookiesSchema.optional(),
    /**
     * The proxy the site's requests (robots.txt's too) go through, over the crawl's DOWNLOADER_PROXY_URL; `none` =
     * straight to the site. From the file only (see FILE_ONLY).
     */
    proxy: proxy.optional(),
    /** Extra CA certificates, skipping verification, a client certificate. From the file only (see FILE_ONLY). */
    tls: tls.optional(),
  })
  .strict();

/**
 * Fields set in the settings file only, never live through the control plane: they name files and variables on
 * the downloaders' machines, and a change of proxy or of certificate checks must be seen at start (in the logs,
 * the warnings), not slipped in while the crawl runs. `render` is read by the render plugin from the file, as the
 * downloader reads it: a live change would route pages the plugin then does not render.
 */
export const FILE_ONLY: readonly string[] = ['proxy', 'tls', 'render'];

export type SiteSettings = z.output<typeof SiteSettingsSchema>;
export type SiteProxySetting = NonNullable<SiteSettings['proxy']>;
export type SiteTlsSetting = NonNullable<SiteSettings['tls']>;

/** The settings file: `sites`, a map from site pattern to settings. */
export const SiteSettingsFileSchema = z.object({ sites: z.record(z.string(), SiteSettingsSchema) }).strict();
