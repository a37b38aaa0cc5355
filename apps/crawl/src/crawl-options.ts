import { availableParallelism } from 'node:os';
import { Command, InvalidArgumentError } from 'commander';
import { parseHostPairs } from '@crawler/config';

export interface CrawlOptions {
  seeds: string[];
  seedsFile?: string;
  maxPages?: number;
  maxBytes?: number;
  /** Seconds (CRAWL_MAX_TIME_MS in ms). */
  maxTime?: number;
  maxDepth?: number;
  /** SITE_SETTINGS_FILE. */
  siteSettings?: string;
  scope?: string;
  delay?: number;
  out: string;
  allowPrivate?: boolean;
  resolve: string[];
  hostsFile?: string;
  /** DOWNLOADER_PROXY_URL. */
  proxy?: string;
  json?: boolean;
  redis?: string;
  s3?: string;
  prefix?: string;
  recrawl?: boolean;
  sitemaps?: string;
  warc?: boolean;
  /** WARC_ALL: every exchange in the WARC files, robots.txt, redirects and errors too. */
  warcAll?: boolean;
  /** Plugins to enable, e.g. ['png'] (PLUGINS). */
  plugins?: string[];
  /** User URL rules (URL_FILTER_INCLUDE, URL_FILTER_EXCLUDE), one a flag. */
  include: string[];
  exclude: string[];
  rulesFile?: string;
}

const repeatable = (value: string, all: string[]) => [...all, value];

const nonNegative = (name: string) => (value: string) => {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError(`${name} must be a number ≥ 0`);
  return n;
};

export function crawlCommand(run: (options: CrawlOptions) => Promise<void>): Command {
  return new Command('crawl')
    .description('Crawl from seed URLs (or bare domains) in one process, politely, and write what it finds to --out.')
    .argument('[seeds...]', 'seed URLs or domain names')
    .option('--seeds-file <file>', 'more seeds, one URL or domain a line (# comments)')
    .option('--max-pages <n>', 'stop after fetching this many pages', nonNegative('--max-pages'))
    .option('--max-bytes <n>', 'stop after fetching this many body bytes in all', nonNegative('--max-bytes'))
    .option('--max-time <seconds>', 'stop after this long, writing the summary of what was done and what was left', nonNegative('--max-time'))
    .option('--max-depth <n>', 'follow links this many levels from a seed (default 10)', nonNegative('--max-depth'))
    .option(
      '--scope <scope>',
      "which links to follow: 'host' (the seed's host), 'domain' (its registrable domain, default), 'allowlist' (URL_FILTER_ALLOWED_DOMAINS) or 'any'",
    )
    .option(
      '--site-settings <file>',
      'per-site settings (delay, page budget, depth, user agent, headers, proxy, TLS) by host pattern, YAML or JSON: see docs/crawl-config.md',
    )
    .option('--delay <seconds>', 'minimum delay between two requests to one host (default 2)', nonNegative('--delay'))
    .option('--out <dir>', 'where pages, the fetch log and the summary go', './crawl-data')
    .option('--allow-private', 'allow hosts that resolve to loopback or private addresses (cloud metadata addresses stay refused)')
    .option('--resolve <name=ip>', 'answer NAME with IP instead of asking DNS (repeatable)', repeatable, [])
    .option(
      '--include <rule>',
      "follow only links matching a rule: '/docs/**' (path glob), 'https://*.example.com/**' (URL glob), 're:REGEX', 'path-re:REGEX', optionally after a host pattern ('docs.example.com /v2/**'); repeatable",
      repeatable,
      [],
    )
    .option('--exclude <rule>', "never follow links matching a rule (written as --include's; wins over --include); repeatable", repeatable, [])
    .option('--rules-file <file>', "URL rules, one a line: 'include RULE' or 'exclude RULE'")
    .option('--proxy <url>', 'send every request through this proxy, http://[user:password@]host:port (a site may set its own, or none)')
    .option('--hosts-file <file>', 'static answers in hosts(5) format')
    .option('--json', 'print the summary as one JSON object on stdout')
    .option('--redis <url>', 'queues and state in Redis (persistent, resumable) instead of memory')
    .option('--s3 <url>', 'page bodies in S3/MinIO, e.g. http://KEY:SECRET@127.0.0.1:9000, instead of --out')
    .option('--prefix <name>', 'namespace of the Redis keys and queues (default crawler)')
    .option('--sitemaps <mode>', "where to find sitemaps: 'robots' (robots.txt Sitemap: lines), 'robots+probe' (or else /sitemap.xml, default) or 'off'")
    .option('--warc', 'also write WARC 1.1 files with a CDX index next to the pages')
    .option('--warc-all', 'WARC of every exchange: robots.txt, redirects and error responses too, each request with its response, unchanged pages as revisits')
    .option('--recrawl', 'keep recrawling fetched pages, more often the more they change (stop with --max-pages or Ctrl-C)')
    .option('--plugins <names>', "plugins to enable, comma-separated (e.g. 'png': also fetch and store PNG images)", (v: string) =>
      v
        .split(',')
        .map((s) => s.trim().toLowerCase())
        .filter(Boolean),
    )
    .action(async (seeds: string[], options: Omit<CrawlOptions, 'seeds'>) => run({ ...options, seeds }));
}

/** CLI flags → configuration paths (the same validation as the environment). */
export function configOverrides(options: CrawlOptions): Record<string, unknown> {
  return {
    redisUrl: options.redis,
    s3Url: options.s3,
    prefix: options.prefix,
    dataDir: options.out,
    'frontier.maxPages': options.maxPages,
    'frontier.maxBytes': options.maxBytes,
    'crawl.maxTimeMs': options.maxTime === undefined ? undefined : Math.round(options.maxTime * 1000),
    'frontier.minDelayMs': options.delay === undefined ? undefined : Math.round(options.delay * 1000),
    'filter.maxDepth': options.maxDepth,
    'sites.file': options.siteSettings,
    'filter.scope': options.scope,
    'filter.include': options.include.length ? options.include : undefined,
    'filter.exclude': options.exclude.length ? options.exclude : undefined,
    'filter.rulesFile': options.rulesFile,
    'dns.allowPrivate': options.allowPrivate,
    'dns.hosts': options.resolve.length ? parseHostPairs(options.resolve.join(',')) : undefined,
    'dns.hostsFile': options.hostsFile,
    'downloader.proxyUrl': options.proxy,
    'frontier.recrawl': options.recrawl,
    'sitemaps.mode': options.sitemaps,
    'storage.warc': options.warc,
    'storage.warcAll': options.warcAll,
    'plugins.enabled': options.plugins,
    // One process serving no HTTP: no port of its own for the URL filter to keep the crawl away from.
    port: 0,
    // One process, the compiler's types: the in-process queues need not check every message again.
    queueValidateInProcess: process.env.QUEUE_VALIDATE_IN_PROCESS ? undefined : false,
    // One process, every stage: pages are parsed on the spare cores.
    'parser.threads': process.env.PARSER_THREADS ? undefined : Math.max(0, availableParallelism() - 1),
  };
}
