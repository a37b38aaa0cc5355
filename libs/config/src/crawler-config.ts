import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { z } from 'zod';
import { parseRedisUrl } from '@crawler/redis';

const bool = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0', 'yes', 'no'])])
  .transform((v) => v === true || v === 'true' || v === '1' || v === 'yes');
const int = (min: number) => z.coerce.number().int().min(min);
const ms = int(0);

/** `IP`, `IP:PORT` or `[IPv6]:PORT`, as dns.Resolver#setServers takes them. */
function isDnsServer(text: string): boolean {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(text);
  const v4 = /^([\d.]+)(?::(\d{1,5}))?$/.exec(text);
  const [ip, port] = bracketed ? [bracketed[1], bracketed[2]] : v4 ? [v4[1], v4[2]] : [text, undefined];
  const family = isIP(ip);
  return family !== 0 && (v4 ? family === 4 : family === 6) && (port === undefined || (+port >= 1 && +port <= 65535));
}

/** `ADDRESS/PREFIX` with a prefix the address's family allows. */
function isCidr(text: string): boolean {
  const [ip, prefix, ...rest] = text.split('/');
  const family = isIP(ip);
  return family !== 0 && rest.length === 0 && /^\d{1,3}$/.test(prefix ?? '') && +prefix <= (family === 4 ? 32 : 128);
}

/** A port (`8080`) or an inclusive range (`8000-8999`) within 1–65535. */
function isPortRange(text: string): boolean {
  const match = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(text);
  return match !== null && +match[1] >= 1 && +match[1] <= +(match[2] ?? match[1]) && +(match[2] ?? match[1]) <= 65535;
}

/** A comma-separated list (or an array, from flags) whose every entry passes `valid`; the error names the bad entries. */
const dnsList = (valid: (entry: string) => boolean, problem: string) =>
  z.preprocess(
    (v) => (typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter(Boolean) : v),
    z.array(z.string()).superRefine((entries, ctx) => {
      for (const entry of entries) if (!valid(entry)) ctx.addIssue({ code: 'custom', message: `"${entry}" ${problem}` });
    }),
  );

/**
 * Every setting of every service, validated at boot. Each field is read from the environment variable
 * named in ENV_NAMES (shared infrastructure: plain names; service knobs: the service's prefix).
 */
export const CrawlerConfigSchema = z.object({
  /**
   * Redis for queues and state: `redis://host:6379` for one node, `redis+cluster://host1:7000,host2:7001` for a
   * Redis Cluster (any of its nodes as seeds); absent = in-memory drivers (embedded mode only).
   */
  redisUrl: z
    .string()
    .superRefine((value, ctx) => {
      try {
        parseRedisUrl(value);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message.replace(/^REDIS_URL /, '') });
      }
    })
    .optional(),
  /**
   * Share of Redis's `maxmemory` in use at which the frontier stops dispatching URLs (intake pauses) until
   * memory is freed or raised: a full Redis refuses writes, so the crawl slows down before it gets there.
   * @defaultValue 0.9
   */
  redisMemoryHighWater: z.coerce.number().gt(0).max(1).default(0.9),
  /** How often a process reads Redis's memory use (`INFO memory`) for that pause, readiness and status. @defaultValue 1000 */
  redisMemoryCheckMs: int(100).default(1000),
  /**
   * How long a starting process waits for REDIS_URL to answer before it exits naming the setting (an outage
   * after start is ridden through instead). @defaultValue 30000
   */
  redisStartupWaitMs: int(0).default(30_000),
  /**
   * Where the per-page records live (stored pages, content-hash owners, duplicates, WARC captures):
   * `postgres://user:password@host:5432/database` for PostgreSQL (tables created or migrated at start);
   * absent = Redis when REDIS_URL is set, else memory. See docs/content.md.
   */
  recordsUrl: z
    .string()
    .regex(/^postgres(ql)?:\/\/[^/]+/, 'must be a PostgreSQL URL: postgres://user:password@host:5432/database')
    .optional(),
  /** Connections each process opens to RECORDS_URL at most. @defaultValue 10 */
  recordsPoolSize: int(1).max(1000).default(10),
  /**
   * How long a starting process waits for RECORDS_URL to answer before it exits naming the setting (an
   * outage after start is ridden through instead). @defaultValue 30000
   */
  recordsStartupWaitMs: int(0).default(30_000),
  /**
   * How long a write or read of the PostgreSQL records waits for the calls of other jobs to join it in one
   * statement (content-seen handles each page as its own job). @defaultValue 5
   */
  recordsBatchLingerMs: int(0).max(1000).default(5),
  /** The most pages (or claims, lookups…) one PostgreSQL records statement carries; a full batch goes at once. @defaultValue 500 */
  recordsBatchMax: int(1).max(100_000).default(500),
  /** S3 endpoint with credentials, e.g. http://KEY:SECRET@minio:9000; absent = filesystem store. */
  s3Url: z.url({ protocol: /^https?$/ }).optional(),
  /** Bucket for page bodies, created at boot when missing. @defaultValue 'crawler' */
  s3Bucket: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/).default('crawler'),
  /** Where the filesystem content store and the embedded run's outputs live. @defaultValue './crawl-data' */
  dataDir: z.string().min(1).default('./crawl-data'),
  /** Namespace of every Redis key and queue, so several crawls can share one Redis. @defaultValue 'crawler' */
  prefix: z.string().regex(/^[A-Za-z0-9_-]+$/).default('crawler'),
  /** HTTP port for /health and /metrics (control plane: also its API). 0 = any free port. @defaultValue 3000 */
  port: int(0).max(65535).default(3000),
  /**
   * The address the HTTP server listens on (an IP address). Pipeline services serve only /health and
   * /metrics, which probes and Prometheus must reach: all interfaces. The control plane: all interfaces
   * when it has a token, else loopback only (see CONTROL_PLANE_ALLOW_UNAUTHENTICATED).
   * @defaultValue '0.0.0.0', or '127.0.0.1' for a control plane without CONTROL_PLANE_TOKEN
   */
  bindAddress: z.string().refine((v) => isIP(v) !== 0, 'is not an IP address (e.g. 127.0.0.1, 0.0.0.0, ::)').optional(),
  controlPlane: z.object({
    /**
     * The secret every request that changes the crawl must carry (`Authorization: Bearer <token>`): at
     * least 16 printable characters, e.g. `openssl rand -hex 32`. Absent: the control plane listens on
     * loopback only.
     */
    token: z
      .string()
      .min(16, 'is too short: use at least 16 characters, e.g. `openssl rand -hex 32`')
      .regex(/^[\x21-\x7e]+$/, 'may hold only printable ASCII characters, no spaces')
      .optional(),
    /** A file holding the token (a mounted Kubernetes or Compose secret); surrounding whitespace is ignored. */
    tokenFile: z.string().min(1).optional(),
    /** Also require the token to read the crawl (status, URLs and their content, hosts, failures); the dashboard's page itself stays open. @defaultValue false */
    protectReads: bool.default(false),
    /** Let a control plane without a token listen on an address other than loopback, where anyone who reaches it controls the crawl. @defaultValue false */
    allowUnauthenticated: bool.default(false),
    /** Largest request body accepted (JSON only), bytes; the CLI splits larger seed lists. @defaultValue 1048576 */
    maxBodyBytes: int(1024).max(256 * 1024 * 1024).default(1024 * 1024),
  }),
  /**
   * How long a process told to stop (SIGTERM, SIGINT, Ctrl-C) waits for its work in hand and its stores to close
   * before it exits anyway, saying so; a second signal exits at once. Longer than DOWNLOADER_TOTAL_TIMEOUT_MS,
   * so a downloader's fetches in flight finish; shorter than its 75 s grace period in the deployments, so it
   * says why before it is killed. @defaultValue 70000
   */
  shutdownTimeoutMs: int(100).default(70_000),
  /** Least severe level logged. @defaultValue 'info' */
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** A queue job held by a process that died is handed to another after this long (BullMQ lock and stall check). @defaultValue 30000 */
  queueStalledMs: int(1000).default(30_000),
  /**
   * Times a queue job may be orphaned by a dying worker and handed on before it is moved to the failed set
   * (BullMQ's maxStalledCount). High enough to ride out a crash loop or repeated node evictions, low enough
   * that a message which kills every worker that takes it stops doing so. @defaultValue 10
   */
  queueMaxStalled: int(1).default(10),
  /** Tries of a message whose handler fails (a bug, bad data) before it is kept in the failed set. @defaultValue 5 */
  queueAttempts: int(1).default(5),
  /** Delay before a failed message's first retry, doubled on each further retry. @defaultValue 1000 */
  queueBackoffMs: int(1).default(1000),
  /**
   * A message that failed because Redis, S3 or PostgreSQL could not be reached (or refused: OOM, LOADING,
   * 5xx, SlowDown) is retried, without using its attempts, for this long after its first such failure: an
   * outage is waited out, not turned into lost pages. @defaultValue 600000
   */
  queueInfraOutageMaxMs: int(1000).default(600_000),
  /** The longest wait between two retries of a message failing on an outage (backoff from QUEUE_BACKOFF_MS, doubled). @defaultValue 30000 */
  queueInfraBackoffMaxMs: int(1).default(30_000),
  /**
   * Jobs of each state a scrape reads to count a queue's messages (`crawler_queue_messages`); past it the
   * count is scaled up from those read. Bounds what one scrape costs Redis however deep the queue. @defaultValue 1000
   */
  queueCountMaxJobs: int(1).default(1000),
  /**
   * Check every message against its schema in the in-process queues too (BullMQ's are always checked: they
   * cross processes). The embedded `crawl` turns it off unless set: its messages never leave the process and
   * their types are checked by the compiler, and checking each page's links again at every hop cost about
   * as much as parsing the page. @defaultValue true
   */
  queueValidateInProcess: bool.default(true),
  /**
   * In-process queues only (the embedded crawl): a stage waits to send while the next stage has this many
   * messages waiting, so fetched pages cannot pile up in memory faster than they are parsed and stored.
   * (The frontier's own queues never make anyone wait.) @defaultValue 500
   */
  queueMaxWaitingInProcess: int(1).default(500),
  breaker: z.object({
    /** Unexpected errors of one consumer within the window that pause it. @defaultValue 20 */
    threshold: int(1).default(20),
    /** The window in which unexpected errors are counted. @defaultValue 10000 */
    windowMs: int(1).default(10_000),
    /** How long a tripped consumer pauses before trying again. @defaultValue 30000 */
    cooldownMs: int(0).default(30_000),
  }),
  /** Append every fetch as one JSON line to this file (the embedded run sets it). */
  fetchLogFile: z.string().optional(),

  frontier: z.object({
    /** Floor of the delay between two requests to one host. @defaultValue 2000 */
    minDelayMs: ms.default(2000),
    /**
     * Let an operator's override (PATCH /hosts/:host) set a host's delay below minDelayMs; each such override
     * is written to the host's politeness audit and listed on the dashboard. Set it for the control plane and
     * the frontier alike. @defaultValue false
     */
    allowDelayBelowMin: bool.default(false),
    /** Delay = at least this multiple of the host's last response time. @defaultValue 2 */
    delayMultiplier: z.coerce.number().min(0).max(100).default(2),
    /** Stop dispatching after this many page fetches; 0 = no limit. @defaultValue 0 */
    maxPages: int(0).default(0),
    /** Recent response times averaged for the latency part of the delay. @defaultValue 5 */
    recentResponses: int(1).max(100).default(5),
    /** Ceiling of the exponential backoff after 429/503 answers. @defaultValue 3600000 */
    maxBackoffMs: ms.default(3_600_000),
    /** A URL answered 429/503 this many times is given up. @defaultValue 5 */
    maxRetries: int(0).default(5),
    /**
     * Requests in all for a URL whose failures may pass (a 5xx other than 503, 408, a timeout, a reset or
     * refused connection, a protocol error); 1 = no retry. Then it is recorded as failed. @defaultValue 3
     */
    transientAttempts: int(1).max(100).default(3),
    /**
     * Wait before a transiently failed URL's first retry, doubled for each further one (±25 % jitter, at most
     * FRONTIER_MAX_BACKOFF_MS); its host's other URLs go on meanwhile at their usual pace. @defaultValue 30000
     */
    retryBackoffMs: ms.default(30_000),
    /** URLs given up on, kept with their reason for `GET /failed-urls` (the newest; older ones are counted only). @defaultValue 1000 */
    failedUrlsKept: int(1).max(1_000_000).default(1000),
    /**
     * A host whose robots.txt asks for a longer Crawl-delay is set aside (its URLs are not fetched, it is
     * reported) rather than waited for; 0 = obey any Crawl-delay. @defaultValue 30000
     */
    maxCrawlDelayMs: ms.default(30_000),
    /**
     * A host whose requests time out this many times in a row (no response in between) is backed off: its
     * URLs are kept but wait FRONTIER_HOST_TIMEOUT_BACKOFF_MS (doubling with each further timeout), and a
     * crawl left with only such hosts ends and names them; 0 = never. @defaultValue 3
     */
    hostTimeoutStrikes: int(0).default(3),
    /** The first back-off of a host that keeps timing out; doubles per further timeout, up to FRONTIER_MAX_BACKOFF_MS. @defaultValue 60000 */
    hostTimeoutBackoffMs: ms.default(60_000),
    /** Front queues (priority levels). @defaultValue 8 */
    frontQueues: int(1).max(64).default(8),
    /** Back queues: hosts served at once (Mercator: ~3× the fetches in flight), divided among the shards. @defaultValue 1024 */
    backQueues: int(1).default(1024),
    /**
     * Shards of the frontier in Redis, each in one cluster slot, spread evenly over the masters; a host's
     * shard follows its site. Set before a crawl starts: a crawl's queued URLs stay in the shards they were
     * put in. @defaultValue 1 on one Redis node, 64 on a Redis Cluster
     */
    shards: int(1).max(256).optional(),
    /** Each front queue is this many times likelier to be served than the next lower one. @defaultValue 2 */
    priorityBias: z.coerce.number().min(1).default(2),
    /** Requests in flight per host at most. @defaultValue 1 */
    perHostLimit: int(1).default(1),
    /** Requests in flight per IP address at most, over all hosts on it. @defaultValue 8 */
    perIpLimit: int(1).default(8),
    /**
     * Minimum gap between two requests to one IP address, over all hosts on it: at most 10 requests a second
     * to one server, which only bites when more than 20 of its sites are due at once (the per-host floor keeps
     * one site under 0.5/s). 0 turns it off. @defaultValue 100
     */
    perIpIntervalMs: ms.default(100),
    /** New-URL batches (frontier-add) handled at once per frontier process. @defaultValue 32 */
    addConcurrency: int(1).default(32),
    /** Fetch outcomes (frontier-done) handled at once per frontier process. @defaultValue 64 */
    doneConcurrency: int(1).default(64),
    /** URLs handed to downloaders and not yet completed, at most. @defaultValue 1000 */
    maxInFlight: int(1).default(1000),
    /** A dispatched URL whose outcome has not come back in this long is given to its host again. @defaultValue 120000 */
    leaseMs: int(1000).default(120_000),
    /**
     * URLs waiting in the front queues at most (not yet routed to a host); past it the lowest-priority ones
     * are dropped, the newest first, counted as `frontier.pruned` and logged. 0 = unbounded. @defaultValue 0
     */
    maxQueued: int(0).default(0),
    /**
     * Politeness audit entries kept per host (two a fetch: its dispatch and its outcome), in Redis: the last
     * few fetches of a host for GET /hosts/:host; the fetch log keeps the whole history on disk. @defaultValue 10
     */
    auditLength: int(1).default(10),
    /**
     * How long a frontier-add batch id is remembered, so that a redelivered batch is not enqueued twice. Must
     * exceed QUEUE_INFRA_OUTAGE_MAX_MS (a batch that failed on an outage is retried up to that long after).
     * @defaultValue 900000
     */
    batchMemoryMs: int(1000).default(900_000),
    /** Recrawl fetched pages on a schedule that adapts to how often they change (the crawl then never ends by itself). @defaultValue false */
    recrawl: bool.default(false),
    /** First recrawl interval of a page. @defaultValue 86400000 */
    recrawlInitialMs: ms.default(86_400_000),
    /** A page that keeps changing is recrawled at most this often. @defaultValue 3600000 */
    recrawlMinMs: ms.default(3_600_000),
    /** A page that never changes is still recrawled this often. @defaultValue 2592000000 */
    recrawlMaxMs: ms.default(30 * 86_400_000),
    /**
     * How a recrawl interval adapts. `adaptive`: it halves when the page changed, doubles when it did not.
     * `hubs`: it halves when the page's last fetch yielded URLs never seen before (a hub gaining links) and
     * doubles otherwise, changed or not (a page that changes without adding links is a leaf).
     * @defaultValue adaptive
     */
    recrawlPolicy: z.enum(['adaptive', 'hubs']).default('adaptive'),
    /**
     * Policy `hubs`: how many pages have their new URLs counted (a counter of an estimated 100 bytes each in the state
     * store). Past it a page not counted yet is treated as a leaf. @defaultValue 1000000
     */
    recrawlHubPages: int(1).default(1_000_000),
  }),
  dns: z.object({
    /** Allow hosts that resolve to loopback, private, link-local… addresses; cloud metadata addresses (169.254.169.254, fd00:ec2::254…) stay refused. @defaultValue false */
    allowPrivate: bool.default(false),
    /** Static answers, NAME=IP pairs separated by commas or whitespace. */
    hosts: z.record(z.string(), z.ipv4().or(z.ipv6())).default({}),
    /** A hosts(5)-format file of static answers. */
    hostsFile: z.string().optional(),
    /**
     * The machine's own hosts file, answered before DNS as the operating system's resolver does (after
     * DNS_HOSTS and DNS_HOSTS_FILE); looked at again every DNS_MIN_TTL_MS; `off` = not read. @defaultValue '/etc/hosts'
     */
    systemHostsFile: z.string().min(1).default('/etc/hosts'),
    /** Cached answers live at least this long whatever their TTL. @defaultValue 60000 */
    minTtlMs: ms.default(60_000),
    /** …and at most this long. @defaultValue 3600000 */
    maxTtlMs: ms.default(3_600_000),
    /** Failed lookups are cached this long. @defaultValue 30000 */
    failureTtlMs: ms.default(30_000),
    /** Jobs resolved at once per process. @defaultValue 64 */
    concurrency: int(1).default(64),
    /** DNS servers asked instead of the system's, comma-separated `IP`, `IP:PORT` or `[IPv6]:PORT`; empty = the system resolver. @defaultValue [] */
    servers: dnsList(isDnsServer, 'is not IP, IP:PORT or [IPv6]:PORT').default([]),
    /** Time a configured server is given to answer on the first try (later tries wait longer). @defaultValue 2000 */
    timeoutMs: int(1).default(2000),
    /** Times each configured server is tried before a lookup fails. @defaultValue 2 */
    tries: int(1).max(10).default(2),
    /** A cached answer read in this last fraction of its TTL is refreshed in the background; 0 = never. @defaultValue 0.2 */
    refreshAheadRatio: z.coerce.number().min(0).lt(1).default(0.2),
    /** Non-public addresses allowed anyway, comma-separated CIDRs (e.g. 127.0.0.0/8,::1/128); a cloud metadata address only when an entry names it alone (169.254.169.254/32). @defaultValue [] */
    allowCidrs: dnsList(isCidr, 'is not a CIDR (ADDRESS/PREFIX)').default([]),
  }),
  downloader: z.object({
    /** This downloader's name on the hash ring; unique per process. @defaultValue host name, pid and a random suffix */
    id: z.string().regex(/^[A-Za-z0-9_-]+$/).optional(),
    /** Heartbeat period on the hash ring; a downloader silent for 3 periods has left. @defaultValue 2000 */
    heartbeatMs: int(100).default(2000),
    /**
     * Fetches in flight per downloader process (never more than one per host), each counted until its body is
     * staged and its outcome sent (STAGING_LINGER_MS). @defaultValue 256
     */
    concurrency: int(1).default(256),
    /** Sent with every request; keep a URL explaining the crawler in it. @defaultValue 'crawler-bot/0.1 (+https://github.com/crawler/crawler/blob/main/docs/for-site-owners.md)' */
    userAgent: z
      .string()
      .min(3)
      // An HTTP field value: visible characters, spaces and tabs. A CR or LF would end the header early (every
      // request, robots.txt's included, would then fail), and other control characters are refused by servers.
      .regex(/^[\t\x20-\x7e\x80-\xff]+$/, 'must be a valid HTTP header value: no line breaks or other control characters')
      .refine((value) => value.trim() === value, 'must not start or end with white space')
      .default('crawler-bot/0.1 (+https://github.com/crawler/crawler/blob/main/docs/for-site-owners.md)'),
    /** Time allowed to open a connection. @defaultValue 10000 */
    connectTimeoutMs: int(1).default(10_000),
    /** Time allowed until the response headers arrive. @defaultValue 15000 */
    headersTimeoutMs: int(1).default(15_000),
    /** Longest silence allowed while the body streams. @defaultValue 15000 */
    bodyTimeoutMs: int(1).default(15_000),
    /** A fetch is abandoned after this long in all, however the bytes trickle in. @defaultValue 60000 */
    totalTimeoutMs: int(1).default(60_000),
    /**
     * A body arriving slower than this (bytes per second, averaged over DOWNLOADER_MIN_RATE_WINDOW_MS) is cut
     * off as `timeout-rate`, long before the total timeout; 0 = no minimum. @defaultValue 1024
     */
    minBytesPerSecond: int(0).default(1024),
    /** The window the minimum transfer rate is measured over; no body is cut before its first window ends. @defaultValue 10000 */
    minRateWindowMs: int(100).default(10_000),
    /** Response headers larger than this are refused (a protocol error). @defaultValue 16384 */
    maxHeaderBytes: int(1024).default(16_384),
    /** Bodies are cut (and marked truncated) at this size. @defaultValue 262144 */
    maxBodyBytes: int(1024).default(256 * 1024),
    /** robots.txt answers are cached this long. @defaultValue 86400000 */
    robotsCacheTtlMs: ms.default(86_400_000),
    /**
     * Longest wait between two tries of a robots.txt that could not be fetched (5xx, 429, network): the
     * ceiling of the backoff and of the server's Retry-After. @defaultValue 600000
     */
    robotsErrorTtlMs: ms.default(600_000),
    /** First wait after a robots.txt could not be fetched; doubled (with jitter) at each failure after. @defaultValue 60000 */
    robotsRetryMs: int(1).default(60_000),
    /** A robots.txt still unreachable this long after its first failure is given up: its host is set aside. @defaultValue 1800000 */
    robotsUnreachableMaxMs: ms.default(1_800_000),
    /** robots.txt bytes parsed at most (RFC 9309 asks for at least 500 KiB). @defaultValue 512000 */
    robotsMaxBytes: int(1024).default(512_000),
    /** Redirect hops followed for a page (each hop goes back through the filter) and for robots.txt. @defaultValue 5 */
    maxRedirects: int(0).max(20).default(5),
  }),
  parser: z.object({
    /** Links kept per page. @defaultValue 5000 */
    maxLinks: int(1).default(5000),
    /** Pages parsed at once per process (parsing is CPU work: more only hides the waits for staged bodies). @defaultValue 32 */
    concurrency: int(1).default(32),
    /**
     * Worker threads parsing beside the event loop; 0 = parse on it. The embedded `crawl` uses one per spare
     * core unless set; a service scales by replicas instead. @defaultValue 0
     */
    threads: int(0).max(64).default(0),
  }),
  extractor: z.object({
    /** Pages' links resolved at once per process. @defaultValue 32 */
    concurrency: int(1).default(32),
  }),
  filter: z.object({
    /** Which links are followed: the seed's host, its registrable domain, the allowlist, or any. @defaultValue 'domain' */
    scope: z.enum(['host', 'domain', 'allowlist', 'any']).default('domain'),
    /** Registrable domains (and their subdomains) followed with scope 'allowlist' (comma-separated). */
    allowedDomains: z.array(z.string()).default([]),
    /** Links followed from a seed at most. @defaultValue 10 */
    maxDepth: int(0).default(10),
    /** Longer URLs are dropped (they are mostly traps). @defaultValue 2048 */
    maxUrlLength: int(16).default(2048),
    /** File extensions never fetched (comma-separated); empty = the built-in list. */
    blockedExtensions: z.array(z.string()).optional(),
    /** Query parameters removed during canonicalisation (comma-separated; `utm_*` style prefixes allowed); empty = the built-in tracking and session list. */
    stripParams: z.array(z.string()).optional(),
    /** A file of blocked domains (one a line, `#` comments; a domain blocks its subdomains), re-read while running. */
    blocklistFile: z.string().min(1).optional(),
    /** How often the blocklist file is checked for changes. @defaultValue 10000 */
    blocklistReloadMs: int(100).default(10_000),
    /** URLs with more query parameters than this are dropped (a trap sign). @defaultValue 12 */
    maxQueryParams: int(0).default(12),
    /** A path segment (or run of segments) repeated more than this many times in a row marks a trap: /a/b/a/b/a/b. @defaultValue 2 */
    maxPathRepeats: int(1).default(2),
    /**
     * Ports that may be fetched, comma-separated ports and ranges; the Fetch standard's bad ports (25, 6000…)
     * are refused whatever this says. @defaultValue ['80', '443', '1024-65535']
     */
    allowedPorts: dnsList(isPortRange, 'is not a port or range (8080, 8000-8999)').default(['80', '443', '1024-65535']),
    /**
     * Ports refused although allowed (infrastructure: Redis, MinIO, PostgreSQL…), comma-separated; a port
     * named alone in URL_FILTER_ALLOWED_PORTS is let through; `none` = no such list; empty = the built-in list.
     */
    blockedPorts: dnsList((entry) => entry === 'none' || isPortRange(entry), 'is not a port, a range (8000-8999) or none').optional(),
    /** Calendar-like URLs (a year, year/month or date in the path or query) further than this many days from today are dropped. @defaultValue 366 */
    calendarWindowDays: int(1).default(366),
    /** Link batches filtered at once per process. @defaultValue 64 */
    concurrency: int(1).default(64),
    /** URLs admitted per host at most; 0 = no budget. @defaultValue 100000 */
    maxPagesPerHost: int(0).default(100_000),
    /**
     * Links a filter process remembers having passed on lately (16 B each, by fingerprint, allocated up
     * front: 16 MiB at the default): found again, they are dropped at once, as URL-seen would drop them,
     * without canonicalising them again; 0 = remember none.
     * @defaultValue 1000000
     */
    recentUrls: int(0).default(1_000_000),
    /** Log every URL's decision with the rule that made it (one line per URL: for tracing a rule, not for a whole crawl). @defaultValue false */
    debug: bool.default(false),
  }),
  seen: z.object({
    /** URL batches checked at once per process. @defaultValue 64 */
    concurrency: int(1).default(64),
    /** URL-seen structure: a Bloom filter (fixed memory, rare false positives) or exact 64-bit fingerprints. @defaultValue 'bloom' */
    mode: z.enum(['bloom', 'exact']).default('bloom'),
    /** URL-seen is sized for this many URLs (Bloom: its bits, in shards of at most 2^32 bits, at least 16 on a Redis Cluster; exact: its number of fingerprint sets). @defaultValue 10000000 */
    expectedUrls: int(1).default(10_000_000),
    /** …at this false-positive rate. @defaultValue 0.001 */
    falsePositiveRate: z.coerce.number().gt(0).lt(0.5).default(0.001),
  }),
  contentSeen: z.object({
    /** Pages whose 64-bit simhashes differ in at most this many bits are near duplicates; 0 = exact duplicates only. @defaultValue 3 */
    nearDuplicateDistance: int(0).max(7).default(3),
    /**
     * Pages checked (and stored) at once per process. High, because a page waits for its segment to be
     * written (PAGES_SEGMENT_LINGER_MS): pages in flight = throughput × that wait. @defaultValue 256
     */
    concurrency: int(1).default(256),
  }),
  storage: z.object({
    /** gzip level of stored pages: 1 (fastest) … 9 (smallest); on HTML, 3 costs about what 1 does and is a little smaller. @defaultValue 3 */
    gzipLevel: int(1).max(9).default(3),
    /**
     * Worker threads compressing fetched pages, in a process that stages or stores them (0: zlib's async API,
     * which costs the event loop about as much as compressing, and the whole process twice as much). Started
     * on first use. @defaultValue 1
     */
    gzipThreads: int(0).max(64).default(1),
    /** New pages stored within this long of each other are written as one segment (with its index). @defaultValue 200 */
    segmentLingerMs: int(0).default(200),
    /** Pages in one segment at most. @defaultValue 256 */
    segmentMaxPages: int(1).default(256),
    /** Compressed bytes in one segment at most. @defaultValue 16777216 */
    segmentMaxBytes: int(1024).default(16 * 1024 * 1024),
    /** Fetched bodies staged together within this long are written as one object (S3, or a directory with Redis). @defaultValue 50 */
    stagingLingerMs: int(0).default(50),
    /** Bodies in one staging bundle at most. @defaultValue 64 */
    stagingMaxBodies: int(1).default(64),
    /** Compressed bytes in one staging bundle at most. @defaultValue 4194304 */
    stagingMaxBytes: int(1024).default(4 * 1024 * 1024),
    /** Also write WARC 1.1 files (request, response, revisit records) with a CDX index to the content store. @defaultValue false */
    warc: bool.default(false),
    /** A WARC file is closed and uploaded at this size. @defaultValue 67108864 */
    warcRotateBytes: int(1024).default(64 * 1024 * 1024),
    /** …or this long after its first record, so a slow crawl's records still land. @defaultValue 60000 */
    warcRotateMs: int(100).default(60_000),
  }),
  plugins: z.object({
    /** Plugins enabled, comma-separated names (`png`): each is `libs/plugin-<name>`, run in the embedded crawl or as the service `plugin-<name>`. Empty = none: the crawl is exactly the core's. @defaultValue [] */
    enabled: z
      .array(z.string().regex(/^[a-z][a-z0-9-]{0,31}$/, 'is not a plugin name (lower-case letters, digits, -)'))
      .max(32)
      .refine((names) => new Set(names).size === names.length, 'names a plugin twice')
      .default([]),
    /** How long a service waits for an enabled plugin to register its manifest before failing the job that needs it (it is retried). @defaultValue 60000 */
    waitMs: int(0).default(60_000),
  }),
  sitemaps: z.object({
    /** Where sitemaps are found: robots.txt `Sitemap:` lines, those or else /sitemap.xml, or nowhere. @defaultValue 'robots+probe' */
    mode: z.enum(['off', 'robots', 'robots+probe']).default('robots+probe'),
    /** A sitemap body (after gunzip) is read up to this size. @defaultValue 10485760 */
    maxBytes: int(1024).default(10 * 1024 * 1024),
    /** URLs taken from one sitemap at most (the protocol's own limit is 50000). @defaultValue 50000 */
    maxUrls: int(1).default(50_000),
  }),
});

export type CrawlerConfig = z.infer<typeof CrawlerConfigSchema>;

/** Environment variable → config path. */
export const ENV_NAMES: Record<string, string> = {
  REDIS_URL: 'redisUrl',
  REDIS_MEMORY_HIGH_WATER: 'redisMemoryHighWater',
  REDIS_MEMORY_CHECK_MS: 'redisMemoryCheckMs',
  REDIS_STARTUP_WAIT_MS: 'redisStartupWaitMs',
  RECORDS_URL: 'recordsUrl',
  RECORDS_POOL_SIZE: 'recordsPoolSize',
  RECORDS_STARTUP_WAIT_MS: 'recordsStartupWaitMs',
  RECORDS_BATCH_LINGER_MS: 'recordsBatchLingerMs',
  RECORDS_BATCH_MAX: 'recordsBatchMax',
  S3_URL: 's3Url',
  S3_BUCKET: 's3Bucket',
  CRAWLER_DATA_DIR: 'dataDir',
  CRAWLER_PREFIX: 'prefix',
  PORT: 'port',
  BIND_ADDRESS: 'bindAddress',
  CONTROL_PLANE_TOKEN: 'controlPlane.token',
  CONTROL_PLANE_TOKEN_FILE: 'controlPlane.tokenFile',
  CONTROL_PLANE_PROTECT_READS: 'controlPlane.protectReads',
  CONTROL_PLANE_ALLOW_UNAUTHENTICATED: 'controlPlane.allowUnauthenticated',
  CONTROL_PLANE_MAX_BODY_BYTES: 'controlPlane.maxBodyBytes',
  LOG_LEVEL: 'logLevel',
  SHUTDOWN_TIMEOUT_MS: 'shutdownTimeoutMs',
  FETCH_LOG_FILE: 'fetchLogFile',
  QUEUE_STALLED_MS: 'queueStalledMs',
  QUEUE_MAX_STALLED: 'queueMaxStalled',
  QUEUE_COUNT_MAX_JOBS: 'queueCountMaxJobs',
  QUEUE_ATTEMPTS: 'queueAttempts',
  QUEUE_BACKOFF_MS: 'queueBackoffMs',
  QUEUE_INFRA_OUTAGE_MAX_MS: 'queueInfraOutageMaxMs',
  QUEUE_INFRA_BACKOFF_MAX_MS: 'queueInfraBackoffMaxMs',
  QUEUE_VALIDATE_IN_PROCESS: 'queueValidateInProcess',
  QUEUE_MAX_WAITING_IN_PROCESS: 'queueMaxWaitingInProcess',
  BREAKER_THRESHOLD: 'breaker.threshold',
  BREAKER_WINDOW_MS: 'breaker.windowMs',
  BREAKER_COOLDOWN_MS: 'breaker.cooldownMs',
  FRONTIER_MIN_DELAY_MS: 'frontier.minDelayMs',
  FRONTIER_ALLOW_DELAY_BELOW_MIN: 'frontier.allowDelayBelowMin',
  FRONTIER_DELAY_MULTIPLIER: 'frontier.delayMultiplier',
  FRONTIER_MAX_PAGES: 'frontier.maxPages',
  FRONTIER_RECENT_RESPONSES: 'frontier.recentResponses',
  FRONTIER_MAX_BACKOFF_MS: 'frontier.maxBackoffMs',
  FRONTIER_MAX_RETRIES: 'frontier.maxRetries',
  FRONTIER_TRANSIENT_ATTEMPTS: 'frontier.transientAttempts',
  FRONTIER_RETRY_BACKOFF_MS: 'frontier.retryBackoffMs',
  FRONTIER_FAILED_URLS_KEPT: 'frontier.failedUrlsKept',
  FRONTIER_MAX_CRAWL_DELAY_MS: 'frontier.maxCrawlDelayMs',
  FRONTIER_HOST_TIMEOUT_STRIKES: 'frontier.hostTimeoutStrikes',
  FRONTIER_HOST_TIMEOUT_BACKOFF_MS: 'frontier.hostTimeoutBackoffMs',
  FRONTIER_FRONT_QUEUES: 'frontier.frontQueues',
  FRONTIER_BACK_QUEUES: 'frontier.backQueues',
  FRONTIER_SHARDS: 'frontier.shards',
  FRONTIER_PRIORITY_BIAS: 'frontier.priorityBias',
  FRONTIER_PER_HOST_LIMIT: 'frontier.perHostLimit',
  FRONTIER_PER_IP_LIMIT: 'frontier.perIpLimit',
  FRONTIER_PER_IP_INTERVAL_MS: 'frontier.perIpIntervalMs',
  FRONTIER_ADD_CONCURRENCY: 'frontier.addConcurrency',
  FRONTIER_DONE_CONCURRENCY: 'frontier.doneConcurrency',
  FRONTIER_MAX_IN_FLIGHT: 'frontier.maxInFlight',
  FRONTIER_LEASE_MS: 'frontier.leaseMs',
  FRONTIER_AUDIT_LENGTH: 'frontier.auditLength',
  FRONTIER_BATCH_MEMORY_MS: 'frontier.batchMemoryMs',
  FRONTIER_MAX_QUEUED: 'frontier.maxQueued',
  FRONTIER_RECRAWL: 'frontier.recrawl',
  FRONTIER_RECRAWL_INITIAL_MS: 'frontier.recrawlInitialMs',
  FRONTIER_RECRAWL_MIN_MS: 'frontier.recrawlMinMs',
  FRONTIER_RECRAWL_MAX_MS: 'frontier.recrawlMaxMs',
  FRONTIER_RECRAWL_POLICY: 'frontier.recrawlPolicy',
  FRONTIER_RECRAWL_HUB_PAGES: 'frontier.recrawlHubPages',
  DNS_ALLOW_PRIVATE: 'dns.allowPrivate',
  DNS_HOSTS: 'dns.hosts',
  DNS_HOSTS_FILE: 'dns.hostsFile',
  DNS_SYSTEM_HOSTS_FILE: 'dns.systemHostsFile',
  DNS_MIN_TTL_MS: 'dns.minTtlMs',
  DNS_MAX_TTL_MS: 'dns.maxTtlMs',
  DNS_FAILURE_TTL_MS: 'dns.failureTtlMs',
  DNS_CONCURRENCY: 'dns.concurrency',
  DNS_SERVERS: 'dns.servers',
  DNS_TIMEOUT_MS: 'dns.timeoutMs',
  DNS_TRIES: 'dns.tries',
  DNS_REFRESH_AHEAD_RATIO: 'dns.refreshAheadRatio',
  DNS_ALLOW_CIDRS: 'dns.allowCidrs',
  DOWNLOADER_ID: 'downloader.id',
  DOWNLOADER_HEARTBEAT_MS: 'downloader.heartbeatMs',
  DOWNLOADER_CONCURRENCY: 'downloader.concurrency',
  DOWNLOADER_USER_AGENT: 'downloader.userAgent',
  DOWNLOADER_CONNECT_TIMEOUT_MS: 'downloader.connectTimeoutMs',
  DOWNLOADER_HEADERS_TIMEOUT_MS: 'downloader.headersTimeoutMs',
  DOWNLOADER_BODY_TIMEOUT_MS: 'downloader.bodyTimeoutMs',
  DOWNLOADER_TOTAL_TIMEOUT_MS: 'downloader.totalTimeoutMs',
  DOWNLOADER_MIN_BYTES_PER_SECOND: 'downloader.minBytesPerSecond',
  DOWNLOADER_MIN_RATE_WINDOW_MS: 'downloader.minRateWindowMs',
  DOWNLOADER_MAX_HEADER_BYTES: 'downloader.maxHeaderBytes',
  DOWNLOADER_MAX_BODY_BYTES: 'downloader.maxBodyBytes',
  DOWNLOADER_ROBOTS_CACHE_TTL_MS: 'downloader.robotsCacheTtlMs',
  DOWNLOADER_ROBOTS_ERROR_TTL_MS: 'downloader.robotsErrorTtlMs',
  DOWNLOADER_ROBOTS_RETRY_MS: 'downloader.robotsRetryMs',
  DOWNLOADER_ROBOTS_UNREACHABLE_MAX_MS: 'downloader.robotsUnreachableMaxMs',
  DOWNLOADER_ROBOTS_MAX_BYTES: 'downloader.robotsMaxBytes',
  DOWNLOADER_MAX_REDIRECTS: 'downloader.maxRedirects',
  PARSER_MAX_LINKS: 'parser.maxLinks',
  PARSER_CONCURRENCY: 'parser.concurrency',
  PARSER_THREADS: 'parser.threads',
  URL_EXTRACTOR_CONCURRENCY: 'extractor.concurrency',
  URL_FILTER_CONCURRENCY: 'filter.concurrency',
  URL_FILTER_SCOPE: 'filter.scope',
  URL_FILTER_MAX_DEPTH: 'filter.maxDepth',
  URL_FILTER_MAX_URL_LENGTH: 'filter.maxUrlLength',
  URL_FILTER_BLOCKED_EXTENSIONS: 'filter.blockedExtensions',
  URL_FILTER_ALLOWED_DOMAINS: 'filter.allowedDomains',
  URL_FILTER_STRIP_PARAMS: 'filter.stripParams',
  URL_FILTER_BLOCKLIST_FILE: 'filter.blocklistFile',
  URL_FILTER_BLOCKLIST_RELOAD_MS: 'filter.blocklistReloadMs',
  URL_FILTER_MAX_QUERY_PARAMS: 'filter.maxQueryParams',
  URL_FILTER_MAX_PATH_REPEATS: 'filter.maxPathRepeats',
  URL_FILTER_CALENDAR_WINDOW_DAYS: 'filter.calendarWindowDays',
  URL_FILTER_MAX_PAGES_PER_HOST: 'filter.maxPagesPerHost',
  URL_FILTER_RECENT_URLS: 'filter.recentUrls',
  URL_FILTER_ALLOWED_PORTS: 'filter.allowedPorts',
  URL_FILTER_BLOCKED_PORTS: 'filter.blockedPorts',
  URL_FILTER_DEBUG: 'filter.debug',
  URL_SEEN_CONCURRENCY: 'seen.concurrency',
  URL_SEEN_MODE: 'seen.mode',
  URL_SEEN_EXPECTED_URLS: 'seen.expectedUrls',
  URL_SEEN_FALSE_POSITIVE_RATE: 'seen.falsePositiveRate',
  CONTENT_SEEN_NEAR_DUPLICATE_DISTANCE: 'contentSeen.nearDuplicateDistance',
  CONTENT_SEEN_CONCURRENCY: 'contentSeen.concurrency',
  CONTENT_GZIP_LEVEL: 'storage.gzipLevel',
  CONTENT_GZIP_THREADS: 'storage.gzipThreads',
  PAGES_SEGMENT_LINGER_MS: 'storage.segmentLingerMs',
  PAGES_SEGMENT_MAX_PAGES: 'storage.segmentMaxPages',
  PAGES_SEGMENT_MAX_BYTES: 'storage.segmentMaxBytes',
  STAGING_LINGER_MS: 'storage.stagingLingerMs',
  STAGING_MAX_BODIES: 'storage.stagingMaxBodies',
  STAGING_MAX_BYTES: 'storage.stagingMaxBytes',
  WARC_ENABLED: 'storage.warc',
  WARC_ROTATE_BYTES: 'storage.warcRotateBytes',
  WARC_ROTATE_MS: 'storage.warcRotateMs',
  SITEMAP_MODE: 'sitemaps.mode',
  SITEMAP_MAX_BYTES: 'sitemaps.maxBytes',
  SITEMAP_MAX_URLS: 'sitemaps.maxUrls',
  PLUGINS: 'plugins.enabled',
  PLUGINS_WAIT_MS: 'plugins.waitMs',
};

/** Settings whose values never appear in an error message. */
const SECRET_SETTINGS = new Set(['controlPlane.token']);

const LIST_SETTINGS = new Set(['filter.blockedExtensions', 'filter.allowedDomains', 'filter.stripParams', 'plugins.enabled']);

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/** Parses `NAME=IP` pairs (comma or whitespace separated). */
export function parseHostPairs(text: string): Record<string, string> {
  const hosts: Record<string, string> = {};
  for (const pair of text.split(/[\s,]+/).filter(Boolean)) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new ConfigError([`"${pair}" is not NAME=IP`]);
    hosts[pair.slice(0, eq).toLowerCase()] = pair.slice(eq + 1);
  }
  return hosts;
}

/** Parses the hosts(5) format: "IP name [aliases…]" lines, '#' comments. */
export function parseHostsFile(text: string): Record<string, string> {
  const hosts: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const [ip, ...names] = raw.replace(/#.*/, '').trim().split(/\s+/);
    for (const name of ip ? names : []) hosts[name.toLowerCase()] = ip;
  }
  return hosts;
}

/** The settings as read, before validation: nested plain objects with leaves of any value. */
interface SettingsTree {
  [key: string]: unknown;
}

function setPath(target: SettingsTree, path: string, value: unknown): void {
  const parts = path.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as SettingsTree;
  node[parts[parts.length - 1]] = value;
}

function envValue(path: string, raw: string): unknown {
  if (path === 'dns.hosts') return parseHostPairs(raw);
  if (LIST_SETTINGS.has(path)) return raw.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  return raw;
}

/** Dot-path → env name, so an error names the variable the operator set. */
const PATH_TO_ENV = Object.fromEntries(Object.entries(ENV_NAMES).map(([env, path]) => [path, env]));

/**
 * Builds the configuration from the environment, then `overrides` (CLI flags) on top. A bad value throws a
 * ConfigError naming the variable, the value and what is allowed.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Record<string, unknown> = {}): CrawlerConfig {
  const input: SettingsTree = {
    frontier: {},
    dns: {},
    downloader: {},
    parser: {},
    extractor: {},
    filter: {},
    seen: {},
    contentSeen: {},
    storage: {},
    sitemaps: {},
    plugins: {},
    breaker: {},
    controlPlane: {},
  };
  const problems: string[] = [];
  for (const [name, path] of Object.entries(ENV_NAMES)) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    try {
      setPath(input, path, envValue(path, raw));
    } catch (error) {
      problems.push(`${name}: ${(error as Error).message}`);
    }
  }
  for (const [path, value] of Object.entries(overrides)) if (value !== undefined) setPath(input, path, value);
  const result = CrawlerConfigSchema.safeParse(input);
  if (!result.success) {
    for (const issue of result.error.issues) {
      const keys = issue.path.map(String);
      // The setting is the longest known prefix of the issue's path (dns.hosts.<name> belongs to DNS_HOSTS).
      let depth = keys.length;
      while (depth > 1 && !PATH_TO_ENV[keys.slice(0, depth).join('.')]) depth--;
      const name = PATH_TO_ENV[keys.slice(0, depth).join('.')] ?? keys.join('.');
      const secret = SECRET_SETTINGS.has(keys.slice(0, depth).join('.'));
      const got = secret ? '(hidden)' : keys.reduce<unknown>((node, key) => (node as SettingsTree | undefined)?.[key], input);
      const where = depth < keys.length ? ` at ${keys.slice(depth).join('.')}` : '';
      problems.push(`${name}${where}: ${issue.message} (got ${JSON.stringify(got)})`);
    }
  }
  if (problems.length) throw new ConfigError(problems);
  const config = result.data!;
  if (config.frontier.leaseMs <= config.downloader.totalTimeoutMs) {
    // A lease that can run out while its fetch is still allowed to run would let a second fetch of the host start.
    throw new ConfigError([
      `FRONTIER_LEASE_MS: must be longer than DOWNLOADER_TOTAL_TIMEOUT_MS (got ${config.frontier.leaseMs} ≤ ${config.downloader.totalTimeoutMs})`,
    ]);
  }
  if (config.frontier.batchMemoryMs <= config.queueInfraOutageMaxMs) {
    // A batch retried after an outage would find its id forgotten, and be enqueued a second time.
    throw new ConfigError([
      `FRONTIER_BATCH_MEMORY_MS: must be longer than QUEUE_INFRA_OUTAGE_MAX_MS (got ${config.frontier.batchMemoryMs} ≤ ${config.queueInfraOutageMaxMs})`,
    ]);
  }
  resolveControlPlaneToken(config);
  if (config.dns.hostsFile) {
    try {
      config.dns.hosts = { ...parseHostsFile(readFileSync(config.dns.hostsFile, 'utf8')), ...config.dns.hosts };
    } catch (error) {
      throw new ConfigError([`DNS_HOSTS_FILE: cannot read ${config.dns.hostsFile}: ${(error as Error).message}`]);
    }
  }
  return config;
}

/** CONTROL_PLANE_TOKEN_FILE read into the token, and the settings that only make sense with a token. */
function resolveControlPlaneToken(config: CrawlerConfig): void {
  const cp = config.controlPlane;
  if (cp.tokenFile) {
    if (cp.token) throw new ConfigError(['CONTROL_PLANE_TOKEN_FILE: set it or CONTROL_PLANE_TOKEN, not both']);
    let text: string;
    try {
      text = readFileSync(cp.tokenFile, 'utf8').trim();
    } catch (error) {
      throw new ConfigError([`CONTROL_PLANE_TOKEN_FILE: cannot read ${cp.tokenFile}: ${(error as Error).message}`]);
    }
    const checked = CrawlerConfigSchema.shape.controlPlane.shape.token.safeParse(text);
    if (!checked.success) throw new ConfigError([`CONTROL_PLANE_TOKEN_FILE: the token in ${cp.tokenFile} ${checked.error.issues[0].message}`]);
    cp.token = text;
  }
  if (cp.protectReads && !cp.token) {
    throw new ConfigError(['CONTROL_PLANE_PROTECT_READS: needs CONTROL_PLANE_TOKEN (or CONTROL_PLANE_TOKEN_FILE): there is no token to protect the reads with']);
  }
}

export const CRAWLER_CONFIG = Symbol('CRAWLER_CONFIG');
