import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { z } from 'zod';
import { parseRedisUrl } from '@crawler/redis';
import { parseSiteSettingsFile, proxyUrlProblem, resolveSiteSettings, SiteRule, SiteSettingsFileError } from '@crawler/site-settings';
import { envNames } from './setting-env';

const bool = z.union([z.boolean(), z.enum(['true', 'false', '1', '0', 'yes', 'no'])]).transform((v) => v === true || v === 'true' || v === '1' || v === 'yes');
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
    (v) =>
      typeof v === 'string'
        ? v
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : v,
    z.array(z.string()).superRefine((entries, ctx) => {
      for (const entry of entries) if (!valid(entry)) ctx.addIssue({ code: 'custom', message: `"${entry}" ${problem}` });
    }),
  );

/**
 * Every setting of every service, validated at boot. Each field names the environment variable it is read
 * from (`.meta({ env })`: shared infrastructure plain names, service knobs the service's prefix), and its doc
 * comment is its row in docs/configuration.md.
 */
export const CrawlerConfigSchema = z.object({
  /**
   * Redis for queues and state: `redis://[user:password@]host:6379[/db]` for one node (`rediss://` with TLS),
   * `redis+cluster://[user:password@]host1:7000,host2:7001,…` for a Redis Cluster (a few of its nodes as seeds; no
   * `/db`). Checked at start: a URL of the wrong kind (a node URL on a cluster node, or the reverse) stops the
   * process with a message saying how to write it. Absent = in-memory drivers (embedded mode only).
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
    .optional()
    .meta({ env: 'REDIS_URL' }),
  /**
   * Share of Redis's `maxmemory` in use at which the frontier stops dispatching URLs (intake pauses), until memory is
   * freed or `maxmemory` raised. A full Redis refuses writes (`OOM command not allowed`), so the crawl slows down
   * before it gets there; what is in flight finishes, and writes refused meanwhile are retried as an outage. Ignored
   * when Redis has no `maxmemory`. On a Redis Cluster, of the fullest master (a full master refuses writes to its
   * slots).
   * @defaultValue 0.9
   */
  redisMemoryHighWater: z.coerce.number().gt(0).max(1).default(0.9).meta({ env: 'REDIS_MEMORY_HIGH_WATER' }),
  /**
   * How often a process reads Redis's memory use (`INFO memory`) for that pause, for `/health/ready` and for the
   * status.
   * @defaultValue 1000
   */
  redisMemoryCheckMs: int(100).default(1000).meta({ env: 'REDIS_MEMORY_CHECK_MS' }),
  /**
   * How long a starting process (and `npm run crawl -- --redis`) waits for `REDIS_URL` to answer before it exits
   * naming the setting and every node it tried. An outage after start is ridden through instead.
   * @defaultValue 30000
   */
  redisStartupWaitMs: int(0).default(30_000).meta({ env: 'REDIS_STARTUP_WAIT_MS' }),
  /**
   * Where the per-page records live (stored pages with their validators and change history, content-hash owners,
   * duplicates, WARC captures): `postgres://user:password@host:5432/database` for PostgreSQL, whose tables are
   * created or migrated at start (under an advisory lock: many processes may start at once) in the schema
   * `CRAWLER_PREFIX` names, so crawls of different prefixes share the database. Checked at start: a
   * database that does not answer within `RECORDS_STARTUP_WAIT_MS`, a migration that fails, a migration recorded in
   * the database that this version does not know (a newer version migrated it), or a table whose columns are not of
   * the types this version reads stops the process (exit 2) with a message naming the setting. After start an outage
   * is waited out: readiness names `postgresql` and the messages that need it are retried
   * (`QUEUE_INFRA_OUTAGE_MAX_MS`). Absent = Redis hashes when `REDIS_URL` is set, else memory. See
   * [content.md](content.md#records).
   */
  recordsUrl: z
    .string()
    .regex(/^postgres(ql)?:\/\/[^/]+/, 'must be a PostgreSQL URL: postgres://user:password@host:5432/database')
    .optional()
    .meta({ env: 'RECORDS_URL' }),
  /**
   * Connections each process opens to `RECORDS_URL` at most (size it per service: content-seen writes, the control
   * plane reads; the server's `max_connections` must cover every replica's pool).
   * @defaultValue 10
   */
  recordsPoolSize: int(1).max(1000).default(10).meta({ env: 'RECORDS_POOL_SIZE' }),
  /**
   * How long a starting process (and the embedded crawl) keeps trying `RECORDS_URL` while the server does not answer
   * (refused, unreachable, starting up) before it exits 2 naming the setting. An answer that will not change (wrong
   * password, no such database) stops it at once. An outage after start is ridden through instead.
   * @defaultValue 30000
   */
  recordsStartupWaitMs: int(0).default(30_000).meta({ env: 'RECORDS_STARTUP_WAIT_MS' }),
  /**
   * How long a call to the PostgreSQL records (a page recorded, a content hash claimed, a URL looked up…) waits for
   * the calls of other jobs in the same process to join it in one statement; `0` = only the calls of the same
   * event-loop turn. Each job's own call is answered (or fails, and the job retries) with its batch.
   * @defaultValue 5
   */
  recordsBatchLingerMs: int(0).max(1000).default(5).meta({ env: 'RECORDS_BATCH_LINGER_MS' }),
  /**
   * The most items one PostgreSQL records statement carries: a batch this full is sent without waiting out the
   * linger.
   * @defaultValue 500
   */
  recordsBatchMax: int(1).max(100_000).default(500).meta({ env: 'RECORDS_BATCH_MAX' }),
  /** S3 endpoint with credentials, e.g. http://KEY:SECRET@minio:9000; absent = filesystem store. */
  s3Url: z
    .url({ protocol: /^https?$/ })
    .optional()
    .meta({ env: 'S3_URL' }),
  /** Bucket for page bodies, created at boot when missing. @defaultValue 'crawler' */
  s3Bucket: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/)
    .default('crawler')
    .meta({ env: 'S3_BUCKET' }),
  /** Where the filesystem content store and the embedded run's outputs live. @defaultValue './crawl-data' */
  dataDir: z.string().min(1).default('./crawl-data').meta({ env: 'CRAWLER_DATA_DIR' }),
  /**
   * Namespace of every Redis key and queue, and with `RECORDS_URL` the PostgreSQL schema of the crawl's records, so
   * several crawls can share one Redis and one database. With `RECORDS_URL` it must also be a schema name of its
   * own: at most 63 characters, not `public` nor `pg_…` ([content.md](content.md#one-schema-per-crawl)).
   * @defaultValue 'crawler'
   */
  prefix: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default('crawler')
    .meta({ env: 'CRAWLER_PREFIX' }),
  /** HTTP port for /health and /metrics (control plane: also its API). 0 = any free port. @defaultValue 3000 */
  port: int(0).max(65535).default(3000).meta({ env: 'PORT' }),
  /**
   * The IP address the HTTP server listens on. Pipeline services serve only /health and /metrics, which probes and
   * Prometheus must reach. The control plane listens on loopback only when it has no token (unless
   * `CONTROL_PLANE_ALLOW_UNAUTHENTICATED`; [control-plane.md](control-plane.md#who-may-use-it)).
   * @defaultValue `0.0.0.0`; control plane without a token: `127.0.0.1`
   */
  bindAddress: z
    .string()
    .refine((v) => isIP(v) !== 0, 'is not an IP address (e.g. 127.0.0.1, 0.0.0.0, ::)')
    .optional()
    .meta({ env: 'BIND_ADDRESS' }),
  controlPlane: z.object({
    /**
     * The secret that every request changing the crawl must carry as `Authorization: Bearer <token>`: at least 16
     * printable characters, e.g. `openssl rand -hex 32`. Absent: the control plane listens on loopback only. The CLI
     * reads the same variable.
     */
    token: z
      .string()
      .min(16, 'is too short: use at least 16 characters, e.g. `openssl rand -hex 32`')
      .regex(/^[\x21-\x7e]+$/, 'may hold only printable ASCII characters, no spaces')
      .optional()
      .meta({ env: 'CONTROL_PLANE_TOKEN' }),
    /**
     * A file holding the token (a mounted Kubernetes or Compose secret); surrounding whitespace is ignored. Set it or
     * `CONTROL_PLANE_TOKEN`, not both.
     */
    tokenFile: z.string().min(1).optional().meta({ env: 'CONTROL_PLANE_TOKEN_FILE' }),
    /**
     * Require the token to read the crawl too (status, history, URLs and their stored content, hosts, failures, dead
     * letters, the operator audit). The dashboard's page stays open and asks for the token. Unset, reads need the
     * token whenever there is one and the control plane listens beyond loopback (`BIND_ADDRESS` not 127.x or ::1);
     * `false` opts out, leaving them open to whoever reaches it. `true` needs a token.
     * @defaultValue true with a token and a non-loopback `BIND_ADDRESS`, else false
     */
    protectReads: bool.optional().meta({ env: 'CONTROL_PLANE_PROTECT_READS' }),
    /**
     * Let a control plane without a token listen on a `BIND_ADDRESS` other than loopback, where anyone who reaches it
     * controls the crawl. It warns at every start.
     * @defaultValue false
     */
    allowUnauthenticated: bool.default(false).meta({ env: 'CONTROL_PLANE_ALLOW_UNAUTHENTICATED' }),
    /**
     * Largest request body accepted, in bytes (JSON only); larger gets `413`. The CLI splits larger seed lists into
     * several requests.
     * @defaultValue 1048576
     */
    maxBodyBytes: int(1024)
      .max(256 * 1024 * 1024)
      .default(1024 * 1024)
      .meta({ env: 'CONTROL_PLANE_MAX_BODY_BYTES' }),
    /**
     * Operator actions the operator audit keeps (seeds, pause, resume, replays, host overrides and purges, each with
     * who, from where and when; `GET /audit`), newest first, in the state store: about 300 bytes each.
     * @defaultValue 10000
     */
    auditKept: int(1).max(1_000_000).default(10_000).meta({ env: 'CONTROL_PLANE_AUDIT_KEPT' }),
    /**
     * Longest `GET /status` waits for a fresh reading of the crawl. Past it (Redis away or slow) it answers at once
     * with the last reading it has, marked stale with its age, and the outages the control plane knows of.
     * @defaultValue 1500
     */
    statusTimeoutMs: int(100).default(1500).meta({ env: 'CONTROL_PLANE_STATUS_TIMEOUT_MS' }),
  }),
  /** Per-site settings (docs/crawl-config.md), the same for every service that applies them. */
  sites: z.object({
    /**
     * A YAML or JSON file of per-site settings keyed by host pattern (`docs.example.com`, `*.example.com`): delay
     * floor, page budget, depth, user agent, extra request headers, proxy, TLS. Read and checked at start: a bad file stops
     * the process with the line, column and field of every problem. `crawl --site-settings FILE` sets it.
     * Absent = no site has settings of its own (they can still be set live: `PUT /sites/:pattern`).
     */
    file: z.string().min(1).optional().meta({ env: 'SITE_SETTINGS_FILE' }),
    /**
     * How often each process reads the sites' live settings (`PUT /sites/:pattern`) again: a change reaches every
     * replica within this long.
     * @defaultValue 1000
     */
    refreshMs: int(100).max(600_000).default(1000).meta({ env: 'SITE_SETTINGS_REFRESH_MS' }),
  }),
  /** The embedded crawl's own limits (`npm run crawl`); the services of the distributed shape run until stopped. */
  crawl: z.object({
    /**
     * The crawl stops after this long (ms), writes its summary (`stopped: 'time-limit'`, what was left) and exits 4;
     * 0 = no limit. `--max-time` sets it in seconds.
     * @defaultValue 0
     */
    maxTimeMs: ms.default(0).meta({ env: 'CRAWL_MAX_TIME_MS' }),
    /**
     * Once hosts waiting for an unreachable robots.txt are all the crawl has left, it waits for them this long at
     * most, then gives them up (set aside, `robots-unreachable`, named in the summary with their last failure)
     * instead of holding the run open until `DOWNLOADER_ROBOTS_UNREACHABLE_MAX_MS`; 0 = wait that out.
     * @defaultValue 120000
     */
    robotsIdleWaitMs: ms.default(120_000).meta({ env: 'CRAWL_ROBOTS_IDLE_WAIT_MS' }),
  }),
  /**
   * How long a process told to stop (SIGTERM, SIGINT, Ctrl-C) waits for its work in hand and its stores to close
   * before it exits anyway, saying so; a second signal exits at once. The default is the downloader's: longer than
   * `DOWNLOADER_TOTAL_TIMEOUT_MS`, so its fetches in flight finish, and shorter than the 75 s grace period the
   * deployments give the downloader alone, so it says why before it is killed. Every other service gets 30 s there
   * (`docker-compose.yml`, `k8s/`), less than this: one whose stop hangs is killed at 30 s without saying why, unless
   * its SHUTDOWN_TIMEOUT_MS is set below that.
   * @defaultValue 70000
   */
  shutdownTimeoutMs: int(100).default(70_000).meta({ env: 'SHUTDOWN_TIMEOUT_MS' }),
  /**
   * How often each process checks the stores it uses (Redis, S3, the records' PostgreSQL), each within 2 s, to know
   * what is down since when: an outage is logged once when it starts and once when it ends, and the control plane's
   * status lists it.
   * @defaultValue 5000
   */
  healthWatchMs: int(100).default(5000).meta({ env: 'HEALTH_WATCH_MS' }),
  /**
   * While an outage lasts, how often it is logged again (one line, with the failures held back meanwhile). Failures
   * of one outage are never logged one by one.
   * @defaultValue 60000
   */
  outageLogReminderMs: int(1000).default(60_000).meta({ env: 'OUTAGE_LOG_REMINDER_MS' }),
  /** Least severe level logged. @defaultValue 'info' */
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').meta({ env: 'LOG_LEVEL' }),
  /**
   * A queue job held by a process that died is handed to another after this long (BullMQ lock and stall check).
   * @defaultValue 30000
   */
  queueStalledMs: int(1000).default(30_000).meta({ env: 'QUEUE_STALLED_MS' }),
  /**
   * Times a queue job may be orphaned by a dying worker and handed on before it is moved to the failed set (BullMQ's
   * maxStalledCount). High enough to ride out a crash loop or repeated node evictions, low enough that a message
   * which kills every worker that takes it stops doing so.
   * @defaultValue 10
   */
  queueMaxStalled: int(1).default(10).meta({ env: 'QUEUE_MAX_STALLED' }),
  /**
   * Tries of a message whose handler fails (a bug, bad data) before it is kept in the failed set (`npm run failed`).
   * The in-process queues of the embedded crawl try 3 times from 100 ms.
   * @defaultValue 5
   */
  queueAttempts: int(1).default(5).meta({ env: 'QUEUE_ATTEMPTS' }),
  /**
   * Delay before a failed message's first retry, doubled on each further retry (5 attempts from 1 s: about 31 s in
   * all). Also the first wait of an outage retry.
   * @defaultValue 1000
   */
  queueBackoffMs: int(1).default(1000).meta({ env: 'QUEUE_BACKOFF_MS' }),
  /**
   * A message that failed because Redis, S3 or PostgreSQL could not be reached or refused the request (connection
   * errors, `LOADING`, `CLUSTERDOWN`, `OOM`, S3 5xx and `SlowDown`, PostgreSQL's `08…` and `57P01`–`57P03`: a refused
   * or cut connection, a shutdown) is retried without using its attempts, for this long after its first such failure;
   * only then is it kept in the failed set. Outages are waited out instead of becoming missing pages
   * ([reliability.md](reliability.md#4-poison-messages-failing-handlers-and-where-they-end-up)).
   * @defaultValue 600000
   */
  queueInfraOutageMaxMs: int(1000).default(600_000).meta({ env: 'QUEUE_INFRA_OUTAGE_MAX_MS' }),
  /**
   * The longest wait between two retries of a message failing on an outage (from `QUEUE_BACKOFF_MS`, doubled each
   * time).
   * @defaultValue 30000
   */
  queueInfraBackoffMaxMs: int(1).default(30_000).meta({ env: 'QUEUE_INFRA_BACKOFF_MAX_MS' }),
  /**
   * Jobs of each state one scrape reads to count a queue's messages (`crawler_queue_messages`: a BullMQ job is an
   * envelope of up to 100 messages). Past it the count is scaled up from the jobs read, so a scrape costs Redis the
   * same however deep the queue.
   * @defaultValue 1000
   */
  queueCountMaxJobs: int(1).default(1000).meta({ env: 'QUEUE_COUNT_MAX_JOBS' }),
  /**
   * Check every message against its schema in the in-process queues too (BullMQ's always are: they cross processes).
   * The embedded `crawl` turns it off unless set: its messages never leave the process, their types are checked by
   * the compiler, and checking each page's links again at every hop cost about as much as parsing the page.
   * @defaultValue true
   */
  queueValidateInProcess: bool.default(true).meta({ env: 'QUEUE_VALIDATE_IN_PROCESS' }),
  /**
   * In-process queues only (the embedded crawl): a stage waits to send while the next stage has this many messages
   * waiting, so fetched pages cannot pile up in memory faster than they are parsed and stored. (The frontier's own
   * queues never make anyone wait.)
   * @defaultValue 500
   */
  queueMaxWaitingInProcess: int(1).default(500).meta({ env: 'QUEUE_MAX_WAITING_IN_PROCESS' }),
  breaker: z.object({
    /** Unexpected errors of one consumer within the window that pause it. @defaultValue 20 */
    threshold: int(1).default(20).meta({ env: 'BREAKER_THRESHOLD' }),
    /** The window in which unexpected errors are counted. @defaultValue 10000 */
    windowMs: int(1).default(10_000).meta({ env: 'BREAKER_WINDOW_MS' }),
    /** How long a tripped consumer pauses before trying again. @defaultValue 30000 */
    cooldownMs: int(0).default(30_000).meta({ env: 'BREAKER_COOLDOWN_MS' }),
  }),
  /** Append every fetch as one JSON line to this file (the embedded run sets it). */
  fetchLogFile: z.string().optional().meta({ env: 'FETCH_LOG_FILE' }),

  frontier: z.object({
    /** Floor of the delay between two requests to one host. @defaultValue 2000 */
    minDelayMs: ms.default(2000).meta({ env: 'FRONTIER_MIN_DELAY_MS' }),
    /**
     * Let an operator's override (`PATCH /hosts/:host`) set a host's delay below `FRONTIER_MIN_DELAY_MS`. Each such
     * override is written to the host's politeness audit and listed in the status and on the dashboard. Set it for
     * the control plane and the frontier alike: otherwise the control plane refuses such overrides with `400`, and
     * the frontier keeps the floor under any that exist.
     * @defaultValue false
     */
    allowDelayBelowMin: bool.default(false).meta({ env: 'FRONTIER_ALLOW_DELAY_BELOW_MIN' }),
    /** Delay = at least this multiple of the host's last response time. @defaultValue 2 */
    delayMultiplier: z.coerce.number().min(0).max(100).default(2).meta({ env: 'FRONTIER_DELAY_MULTIPLIER' }),
    /** Stop dispatching after this many page fetches; 0 = no limit. @defaultValue 0 */
    maxPages: int(0).default(0).meta({ env: 'FRONTIER_MAX_PAGES' }),
    /**
     * Stop dispatching once this many body bytes were fetched in all (the bodies of pages and sitemaps as read, robots.txt
     * not counted; `bytes.fetched` in the totals); 0 = no limit. Pages in flight then finish and their links
     * are kept, as with FRONTIER_MAX_PAGES; the status says `frontier.byte-budget-spent`. The crawl-wide count is
     * read every 250 ms at most and is added to by every process every 100 ms, so a crawl may fetch up to
     * that long of bytes (and the pages in flight) past it. `crawl --max-bytes` sets it.
     * @defaultValue 0
     */
    maxBytes: int(0).default(0).meta({ env: 'FRONTIER_MAX_BYTES' }),
    /**
     * Stop dispatching this long (ms) after the crawl's first dispatch (kept in the state store, so every replica
     * stops together and a restarted frontier keeps the crawl's clock); 0 = no limit. Pages in flight then finish
     * and their links are kept: raise it (or set 0) and restart the frontier to go on. The status says
     * `frontier.time-limit`. The embedded crawl sets it from `--max-time` (CRAWL_MAX_TIME_MS), a clock per run.
     * @defaultValue 0
     */
    maxTimeMs: ms.default(0).meta({ env: 'FRONTIER_MAX_TIME_MS' }),
    /** Recent response times averaged for the latency part of the delay. @defaultValue 5 */
    recentResponses: int(1).max(100).default(5).meta({ env: 'FRONTIER_RECENT_RESPONSES' }),
    /** Ceiling of the exponential backoff after 429/503 answers. @defaultValue 3600000 */
    maxBackoffMs: ms.default(3_600_000).meta({ env: 'FRONTIER_MAX_BACKOFF_MS' }),
    /**
     * A URL answered 429/503 this many times is given up (and a host whose name fails to resolve for a passing
     * reason, after this many deferrals).
     * @defaultValue 5
     */
    maxRetries: int(0).default(5).meta({ env: 'FRONTIER_MAX_RETRIES' }),
    /**
     * Requests in all for a URL whose failure may pass (a 5xx other than 503, 408, a timeout, a reset or refused
     * connection, a protocol error); 1 = no retry. After the last one the URL is recorded as failed (`GET
     * /failed-urls`, `npm run failed-urls`).
     * @defaultValue 3
     */
    transientAttempts: int(1).max(100).default(3).meta({ env: 'FRONTIER_TRANSIENT_ATTEMPTS' }),
    /**
     * Wait before a transiently failed URL's first retry, doubled for each further one, ±25 % jitter, at most
     * `FRONTIER_MAX_BACKOFF_MS`. The host's other URLs go on at their usual pace meanwhile.
     * @defaultValue 30000
     */
    retryBackoffMs: ms.default(30_000).meta({ env: 'FRONTIER_RETRY_BACKOFF_MS' }),
    /**
     * URLs given up on, kept with their reason for `GET /failed-urls`: the newest (older ones stay counted in
     * `failed-urls.<reason>`).
     * @defaultValue 1000
     */
    failedUrlsKept: int(1).max(1_000_000).default(1000).meta({ env: 'FRONTIER_FAILED_URLS_KEPT' }),
    /**
     * A host whose robots.txt asks for a longer Crawl-delay is set aside (not fetched, reported by name) instead of
     * waited for; 0 = obey any Crawl-delay.
     * @defaultValue 30000
     */
    maxCrawlDelayMs: ms.default(30_000).meta({ env: 'FRONTIER_MAX_CRAWL_DELAY_MS' }),
    /**
     * A host whose URLs time out, this many distinct ones in a row (no response in between; a URL's retries do not
     * count again), is backed off (`timeouts`):
     * its URLs are kept but wait `FRONTIER_HOST_TIMEOUT_BACKOFF_MS`, doubling with each further timeout; a response
     * ends it. A crawl left with only such hosts ends and names them. 0 = never.
     * @defaultValue 3
     */
    hostTimeoutStrikes: int(0).default(3).meta({ env: 'FRONTIER_HOST_TIMEOUT_STRIKES' }),
    /**
     * The first back-off of a host that keeps timing out; doubles per further timeout, up to
     * `FRONTIER_MAX_BACKOFF_MS`.
     * @defaultValue 60000
     */
    hostTimeoutBackoffMs: ms.default(60_000).meta({ env: 'FRONTIER_HOST_TIMEOUT_BACKOFF_MS' }),
    /** Front queues (priority levels). @defaultValue 8 */
    frontQueues: int(1).max(64).default(8).meta({ env: 'FRONTIER_FRONT_QUEUES' }),
    /**
     * Back queues: hosts served at once (Mercator: ~3× the fetches in flight). Divided among the shards: each gets
     * ⌈m/S⌉, at least 1.
     * @defaultValue 1024
     */
    backQueues: int(1).default(1024).meta({ env: 'FRONTIER_BACK_QUEUES' }),
    /**
     * Shards of the frontier in Redis (1 … 256), each in one cluster slot, the slots evenly spaced so shards spread
     * evenly over the masters; a host's shard follows its registrable domain (see
     * [frontier.md](frontier.md#shards-on-a-redis-cluster)). Set it before a crawl starts: queued URLs stay in the
     * shards they were put in.
     * @defaultValue `1` on one Redis node (the unsharded key layout), `64` on a Redis Cluster
     */
    shards: int(1).max(256).optional().meta({ env: 'FRONTIER_SHARDS' }),
    /** Each front queue is this many times likelier to be served than the next lower one. @defaultValue 2 */
    priorityBias: z.coerce.number().min(1).default(2).meta({ env: 'FRONTIER_PRIORITY_BIAS' }),
    /**
     * Requests in flight per host at most; a site's `concurrency` (SITE_SETTINGS_FILE, `PUT /sites`) replaces it for
     * the site's hosts, up or down (see [frontier.md](frontier.md#7-politeness)).
     * @defaultValue 1
     */
    perHostLimit: int(1).default(1).meta({ env: 'FRONTIER_PER_HOST_LIMIT' }),
    /** Requests in flight per IP address at most, over all hosts on it. @defaultValue 8 */
    perIpLimit: int(1).default(8).meta({ env: 'FRONTIER_PER_IP_LIMIT' }),
    /**
     * Minimum gap between two requests to one IP address, over all hosts on it (at most 10 requests a second to one
     * server by default; it bites only when over 20 of its sites are due at once); 0 = off.
     * @defaultValue 100
     */
    perIpIntervalMs: ms.default(100).meta({ env: 'FRONTIER_PER_IP_INTERVAL_MS' }),
    /**
     * The per-IP allowance grows with the distinct registrable domains seen on an address in this crawl: ⌈d / this⌉
     * times `FRONTIER_PER_IP_LIMIT` in flight, and `FRONTIER_PER_IP_INTERVAL_MS` divided by as much, so a CDN address
     * serving thousands of the crawl's sites is not held to one server's rate. At 20, each step adds 10 requests a
     * second per 20 sites, the most their 2 s per-host floor lets them ask for (see
     * [frontier.md](frontier.md#7-politeness)).
     * @defaultValue 20
     */
    perIpDomainsPerStep: int(1).default(20).meta({ env: 'FRONTIER_PER_IP_DOMAINS_PER_STEP' }),
    /**
     * The per-IP allowance is at most this many times the base one (16: 128 in flight, 6 ms apart, with the base 8
     * and 100 ms); 1 = never grown (the rule before domains were counted).
     * @defaultValue 16
     */
    perIpMaxScale: int(1).max(10_000).default(16).meta({ env: 'FRONTIER_PER_IP_MAX_SCALE' }),
    /**
     * Address ranges of CDN edges, comma-separated CIDRs (e.g. 104.16.0.0/13,2606:4700::/32): no per-IP limit there,
     * only the per-host ones (one request at a time per host, its delay, Crawl-delay, back-off on 429/503).
     * @defaultValue []
     */
    perIpCdnCidrs: dnsList(isCidr, 'is not a CIDR (ADDRESS/PREFIX)').default([]).meta({ env: 'FRONTIER_PER_IP_CDN_CIDRS' }),
    /**
     * Address ranges always held to the base per-IP rule, however many domains they serve, comma-separated CIDRs
     * (a server known to be small; wins over `FRONTIER_PER_IP_CDN_CIDRS`).
     * @defaultValue []
     */
    perIpStrictCidrs: dnsList(isCidr, 'is not a CIDR (ADDRESS/PREFIX)').default([]).meta({ env: 'FRONTIER_PER_IP_STRICT_CIDRS' }),
    /** New-URL batches (frontier-add) handled at once per frontier process. @defaultValue 32 */
    addConcurrency: int(1).default(32).meta({ env: 'FRONTIER_ADD_CONCURRENCY' }),
    /** Fetch outcomes (frontier-done) handled at once per frontier process. @defaultValue 64 */
    doneConcurrency: int(1).default(64).meta({ env: 'FRONTIER_DONE_CONCURRENCY' }),
    /** URLs handed to downloaders and not yet completed, at most. @defaultValue 1000 */
    maxInFlight: int(1).default(1000).meta({ env: 'FRONTIER_MAX_IN_FLIGHT' }),
    /**
     * A dispatched URL whose outcome has not come back in this long is given to its host again.
     * @defaultValue 120000
     */
    leaseMs: int(1000).default(120_000).meta({ env: 'FRONTIER_LEASE_MS' }),
    /**
     * URLs waiting in the front queues at most (not yet routed to a host). Past it, the lowest-priority ones are
     * dropped, newest first, counted as `frontier.pruned` and logged (docs/frontier.md, "Pruning"). 0 means
     * unbounded.
     * @defaultValue 0
     */
    maxQueued: int(0).default(0).meta({ env: 'FRONTIER_MAX_QUEUED' }),
    /**
     * The embedded crawl without Redis: URLs a frontier queue (each front queue, each host's back queue) keeps in
     * memory at either end; the rest wait in `<--out>/frontier/queued.spill`, read back a chunk of this many at a
     * time, so the process's memory does not grow with the URLs queued (docs/frontier.md, "Embedded: queued URLs
     * on disk"). 0 keeps them all in memory.
     * @defaultValue 256
     */
    spillChunkItems: int(0).default(256).meta({ env: 'FRONTIER_SPILL_CHUNK_ITEMS' }),
    /**
     * Politeness audit entries kept per host, in Redis (two a fetch: its dispatch and its outcome; `GET /hosts/:host`
     * shows them). Kept short because it costs Redis memory for every host (≈ 150 B an entry); the fetch log keeps
     * the whole history on disk.
     * @defaultValue 10
     */
    auditLength: int(1).default(10).meta({ env: 'FRONTIER_AUDIT_LENGTH' }),
    /**
     * How long a `frontier-add` batch id is remembered, so that a redelivered batch is not enqueued twice. Must be
     * longer than `QUEUE_INFRA_OUTAGE_MAX_MS` (boot refuses it otherwise): a batch that failed on an outage is
     * retried up to that long after.
     * @defaultValue 900000
     */
    batchMemoryMs: int(1000).default(900_000).meta({ env: 'FRONTIER_BATCH_MEMORY_MS' }),
    /**
     * Recrawl fetched pages on a schedule that adapts to how often they change (the crawl then never ends by itself).
     * @defaultValue false
     */
    recrawl: bool.default(false).meta({ env: 'FRONTIER_RECRAWL' }),
    /** First recrawl interval of a page (of a sitemap's page: its `<changefreq>`, else its `<lastmod>`'s age). @defaultValue 86400000 */
    recrawlInitialMs: ms.default(86_400_000).meta({ env: 'FRONTIER_RECRAWL_INITIAL_MS' }),
    /** A page that keeps changing is recrawled at most this often. @defaultValue 3600000 */
    recrawlMinMs: ms.default(3_600_000).meta({ env: 'FRONTIER_RECRAWL_MIN_MS' }),
    /** A page that never changes is still recrawled this often. @defaultValue 2592000000 */
    recrawlMaxMs: ms.default(30 * 86_400_000).meta({ env: 'FRONTIER_RECRAWL_MAX_MS' }),
    /**
     * How a recrawl interval adapts. `adaptive`: it halves when the page changed, doubles when it did not. `hubs`: it
     * halves when the page's last fetch yielded URLs never seen before (a hub gaining links) and doubles otherwise,
     * changed or not (a page that changes without adding links is a leaf).
     * @defaultValue adaptive
     */
    recrawlPolicy: z.enum(['adaptive', 'hubs']).default('adaptive').meta({ env: 'FRONTIER_RECRAWL_POLICY' }),
    /**
     * Policy `hubs`: how many pages have their new URLs counted (a counter of an estimated 100 bytes each in the
     * state store). Past it a page not counted yet is treated as a leaf.
     * @defaultValue 1000000
     */
    recrawlHubPages: int(1).default(1_000_000).meta({ env: 'FRONTIER_RECRAWL_HUB_PAGES' }),
  }),
  dns: z.object({
    /**
     * Allow hosts that resolve to loopback, private, link-local… addresses; cloud metadata addresses
     * (169.254.169.254, fd00:ec2::254…) stay refused.
     * @defaultValue false
     */
    allowPrivate: bool.default(false).meta({ env: 'DNS_ALLOW_PRIVATE' }),
    /** Static answers, NAME=IP pairs separated by commas or whitespace. */
    hosts: z.record(z.string(), z.ipv4().or(z.ipv6())).default({}).meta({ env: 'DNS_HOSTS' }),
    /** A hosts(5)-format file of static answers; a name on several lines takes the first line's address. */
    hostsFile: z.string().optional().meta({ env: 'DNS_HOSTS_FILE' }),
    /**
     * The machine's own hosts file, answered before DNS as the operating system's resolver does (after `DNS_HOSTS`
     * and `DNS_HOSTS_FILE`); looked at again every `DNS_MIN_TTL_MS`; `off` = not read.
     * @defaultValue /etc/hosts
     */
    systemHostsFile: z.string().min(1).default('/etc/hosts').meta({ env: 'DNS_SYSTEM_HOSTS_FILE' }),
    /** Cached answers live at least this long whatever their TTL. @defaultValue 60000 */
    minTtlMs: ms.default(60_000).meta({ env: 'DNS_MIN_TTL_MS' }),
    /** …and at most this long. @defaultValue 3600000 */
    maxTtlMs: ms.default(3_600_000).meta({ env: 'DNS_MAX_TTL_MS' }),
    /** Failed lookups are cached this long. @defaultValue 30000 */
    failureTtlMs: ms.default(30_000).meta({ env: 'DNS_FAILURE_TTL_MS' }),
    /** Jobs resolved at once per process. @defaultValue 64 */
    concurrency: int(1).default(64).meta({ env: 'DNS_CONCURRENCY' }),
    /**
     * DNS servers asked instead of the system's, comma-separated `IP`, `IP:PORT` or `[IPv6]:PORT`; empty = the system
     * resolver.
     * @defaultValue []
     */
    servers: dnsList(isDnsServer, 'is not IP, IP:PORT or [IPv6]:PORT').default([]).meta({ env: 'DNS_SERVERS' }),
    /** Time a configured server is given to answer on the first try (later tries wait longer). @defaultValue 2000 */
    timeoutMs: int(1).default(2000).meta({ env: 'DNS_TIMEOUT_MS' }),
    /** Times each configured server is tried before a lookup fails. @defaultValue 2 */
    tries: int(1).max(10).default(2).meta({ env: 'DNS_TRIES' }),
    /**
     * A cached answer read in this last fraction of its TTL is refreshed in the background; 0 = never.
     * @defaultValue 0.2
     */
    refreshAheadRatio: z.coerce.number().min(0).lt(1).default(0.2).meta({ env: 'DNS_REFRESH_AHEAD_RATIO' }),
    /**
     * Non-public addresses allowed anyway, comma-separated CIDRs (e.g. 127.0.0.0/8,::1/128); a cloud metadata address
     * only when an entry names it alone (169.254.169.254/32).
     * @defaultValue []
     */
    allowCidrs: dnsList(isCidr, 'is not a CIDR (ADDRESS/PREFIX)').default([]).meta({ env: 'DNS_ALLOW_CIDRS' }),
  }),
  downloader: z.object({
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
      .meta({ env: 'DOWNLOADER_PROXY_URL' }),
    /**
     * A file (a mounted secret) holding `user:password` for `DOWNLOADER_PROXY_URL`, instead of putting them in the URL;
     * surrounding white space is ignored. Read by the downloader at start.
     */
    proxyCredentialsFile: z.string().min(1).optional().meta({ env: 'DOWNLOADER_PROXY_CREDENTIALS_FILE' }),
  }),
  parser: z.object({
    /** Links kept per page. @defaultValue 5000 */
    maxLinks: int(1).default(5000).meta({ env: 'PARSER_MAX_LINKS' }),
    /**
     * Pages parsed at once per process (parsing is CPU work: more only hides the waits for staged bodies).
     * @defaultValue 32
     */
    concurrency: int(1).default(32).meta({ env: 'PARSER_CONCURRENCY' }),
    /**
     * Worker threads parsing beside the event loop; 0 = parse on it. The embedded `crawl` uses one per spare core
     * unless set; a service scales by replicas instead.
     * @defaultValue 0
     */
    threads: int(0).max(64).default(0).meta({ env: 'PARSER_THREADS' }),
  }),
  extractor: z.object({
    /** Pages' links resolved at once per process. @defaultValue 32 */
    concurrency: int(1).default(32).meta({ env: 'URL_EXTRACTOR_CONCURRENCY' }),
  }),
  filter: z.object({
    /**
     * Which links are followed: the seed's host, its registrable domain, the allowlist, or any.
     * @defaultValue 'domain'
     */
    scope: z.enum(['host', 'domain', 'allowlist', 'any']).default('domain').meta({ env: 'URL_FILTER_SCOPE' }),
    /**
     * Registrable domains (and their subdomains) followed with scope 'allowlist' (comma-separated).
     * @defaultValue []
     */
    allowedDomains: z.array(z.string()).default([]).meta({ env: 'URL_FILTER_ALLOWED_DOMAINS' }),
    /** Links followed from a seed at most. @defaultValue 10 */
    maxDepth: int(0).default(10).meta({ env: 'URL_FILTER_MAX_DEPTH' }),
    /** Longer URLs are dropped (they are mostly traps). @defaultValue 2048 */
    maxUrlLength: int(16).default(2048).meta({ env: 'URL_FILTER_MAX_URL_LENGTH' }),
    /** File extensions never fetched (comma-separated); empty = the built-in list. */
    blockedExtensions: z.array(z.string()).optional().meta({ env: 'URL_FILTER_BLOCKED_EXTENSIONS' }),
    /**
     * Query parameters removed during canonicalisation (comma-separated; `utm_*` style prefixes allowed); empty = the
     * built-in tracking and session list.
     */
    stripParams: z.array(z.string()).optional().meta({ env: 'URL_FILTER_STRIP_PARAMS' }),
    /**
     * User URL rules that let URLs through, one a line: `[host-pattern ]matcher`, where the matcher is a path glob
     * (`/docs/**`), a URL glob (`https://*.example.com/**`), `re:REGEX` (on the whole URL) or `path-re:REGEX` (on the
     * path and query). A URL whose host some include rules apply to must match one of them. Seeds are exempt; see
     * [user URL rules](crawl-config.md#a-docs-site-crawl-with-includeexclude-rules).
     * @defaultValue none
     */
    include: z.array(z.string()).default([]).meta({ env: 'URL_FILTER_INCLUDE' }),
    /**
     * User URL rules that drop URLs, one a line, written as `URL_FILTER_INCLUDE`'s; an exclude rule wins over every
     * include rule. Seeds are exempt.
     * @defaultValue none
     */
    exclude: z.array(z.string()).default([]).meta({ env: 'URL_FILTER_EXCLUDE' }),
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
    allowedPorts: dnsList(isPortRange, 'is not a port or range (8080, 8000-8999)').default(['80', '443', '1024-65535']).meta({ env: 'URL_FILTER_ALLOWED_PORTS' }),
    /**
     * More ports refused although allowed, comma-separated ports and ranges, on top of the built-in infrastructure list
     * (Redis, MinIO, PostgreSQL…) and the crawler's own ports (those of `REDIS_URL`, `S3_URL`, `RECORDS_URL`, `PORT`),
     * which no setting empties: a port named alone in `URL_FILTER_ALLOWED_PORTS` is the only way through (see
     * [URL filter rules](#url-filter-rules)).
     * @defaultValue none beyond the built-in list
     */
    blockedPorts: dnsList(
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
  }),
  seen: z.object({
    /** URL batches checked at once per process. @defaultValue 64 */
    concurrency: int(1).default(64).meta({ env: 'URL_SEEN_CONCURRENCY' }),
    /**
     * URL-seen structure: a Bloom filter (fixed memory, rare false positives) or exact 64-bit fingerprints.
     * @defaultValue 'bloom'
     */
    mode: z.enum(['bloom', 'exact']).default('bloom').meta({ env: 'URL_SEEN_MODE' }),
    /**
     * URL-seen is sized for this many URLs (Bloom: its bits, in shards of at most 2³² bits, at least 16 on a Redis
     * Cluster, all taken in Redis by the first URLs: a crawl refuses to start on a Redis whose `maxmemory` has no
     * room for them; exact: its number of fingerprint sets).
     * @defaultValue 10000000
     */
    expectedUrls: int(1).default(10_000_000).meta({ env: 'URL_SEEN_EXPECTED_URLS' }),
    /** …at this false-positive rate. @defaultValue 0.001 */
    falsePositiveRate: z.coerce.number().gt(0).lt(0.5).default(0.001).meta({ env: 'URL_SEEN_FALSE_POSITIVE_RATE' }),
    /**
     * How long a batch's answer (which of its URLs were new) is kept while its URLs are not yet handed to the
     * frontier. A message that failed on its way there waits in the failed set for an operator's replay, which
     * must still find the answer: its URLs are marked seen, and only the answer says they were new. Dropped as
     * soon as the URLs are sent, so Redis holds the answers of the batches in flight or failed, not of every
     * batch. Must be longer than `QUEUE_INFRA_OUTAGE_MAX_MS` (boot refuses it otherwise). 7 days by default.
     * @defaultValue 604800000
     */
    answerMemoryMs: int(60_000).default(604_800_000).meta({ env: 'URL_SEEN_ANSWER_MEMORY_MS' }),
  }),
  contentSeen: z.object({
    /**
     * Pages whose 64-bit simhashes differ in at most this many bits are near duplicates; 0 = exact duplicates only.
     * @defaultValue 3
     */
    nearDuplicateDistance: int(0).max(7).default(3).meta({ env: 'CONTENT_SEEN_NEAR_DUPLICATE_DISTANCE' }),
    /**
     * Pages checked (and stored) at once per process. High, because a page waits for its segment to be written
     * (`PAGES_SEGMENT_LINGER_MS`): pages in flight = throughput × that wait.
     * @defaultValue 256
     */
    concurrency: int(1).default(256).meta({ env: 'CONTENT_SEEN_CONCURRENCY' }),
  }),
  storage: z.object({
    /**
     * gzip level of stored pages (and staged bodies): 1 (fastest) … 9 (smallest); on HTML, 3 costs about what 1 does
     * and is a little smaller.
     * @defaultValue 3
     */
    gzipLevel: int(1).max(9).default(3).meta({ env: 'CONTENT_GZIP_LEVEL' }),
    /**
     * Worker threads compressing fetched pages, in a process that stages or stores them (0: zlib's async API, which
     * costs the event loop about as much as compressing, and the whole process twice as much). Started on first use.
     * @defaultValue 1
     */
    gzipThreads: int(0).max(64).default(1).meta({ env: 'CONTENT_GZIP_THREADS' }),
    /**
     * New pages stored within this long of each other are written as one segment (with its index).
     * @defaultValue 200
     */
    segmentLingerMs: int(0).default(200).meta({ env: 'PAGES_SEGMENT_LINGER_MS' }),
    /** Pages in one segment at most. @defaultValue 256 */
    segmentMaxPages: int(1).default(256).meta({ env: 'PAGES_SEGMENT_MAX_PAGES' }),
    /** Compressed bytes in one segment at most. @defaultValue 16777216 */
    segmentMaxBytes: int(1024)
      .default(16 * 1024 * 1024)
      .meta({ env: 'PAGES_SEGMENT_MAX_BYTES' }),
    /**
     * Fetched bodies staged together within this long are written as one object (S3, or a directory with Redis).
     * @defaultValue 50
     */
    stagingLingerMs: int(0).default(50).meta({ env: 'STAGING_LINGER_MS' }),
    /** Bodies in one staging bundle at most. @defaultValue 64 */
    stagingMaxBodies: int(1).default(64).meta({ env: 'STAGING_MAX_BODIES' }),
    /** Compressed bytes in one staging bundle at most. @defaultValue 4194304 */
    stagingMaxBytes: int(1024)
      .default(4 * 1024 * 1024)
      .meta({ env: 'STAGING_MAX_BYTES' }),
    /**
     * Also write WARC 1.1 files (request, response, revisit records) with a CDX index to the content store.
     * @defaultValue false
     */
    warc: bool.default(false).meta({ env: 'WARC_ENABLED' }),
    /**
     * Record every exchange the downloader has in the WARC files, not only the pages stored: robots.txt,
     * redirects, error responses (their bodies read up to the downloader's limit), sitemaps, plugin types; each
     * response paired with its request as sent, a 304 or an unchanged body as a revisit record. The downloader
     * writes them (to the content store), and content-seen writes none. Implies `warc`.
     * @defaultValue false
     */
    warcAll: bool.default(false).meta({ env: 'WARC_ALL' }),
    /** A WARC file is closed and uploaded at this size. @defaultValue 67108864 */
    warcRotateBytes: int(1024)
      .default(64 * 1024 * 1024)
      .meta({ env: 'WARC_ROTATE_BYTES' }),
    /** …or this long after its first record, so a slow crawl's records still land. @defaultValue 60000 */
    warcRotateMs: int(100).default(60_000).meta({ env: 'WARC_ROTATE_MS' }),
  }),
  plugins: z.object({
    /**
     * Plugins enabled, comma-separated names (`png`, `monitor`, `render`, `focus`): each is `libs/plugin-<name>`,
     * loaded by the embedded crawl or run as the service `plugin-<name>`. Empty = none: the crawl is exactly the
     * core's. Give every service the same list.
     * @defaultValue []
     */
    enabled: z
      .array(z.string().regex(/^[a-z][a-z0-9-]{0,31}$/, 'is not a plugin name (lower-case letters, digits, -)'))
      .max(32)
      .refine((names) => new Set(names).size === names.length, 'names a plugin twice')
      .default([])
      .meta({ env: 'PLUGINS' }),
    /**
     * How long a service waits for an enabled plugin to register its manifest before failing the job that needs it
     * (the job is retried).
     * @defaultValue 60000
     */
    waitMs: int(0).default(60_000).meta({ env: 'PLUGINS_WAIT_MS' }),
  }),
  sitemaps: z.object({
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
  }),
});

export type CrawlerConfig = z.infer<typeof CrawlerConfigSchema> & {
  /** SITE_SETTINGS_FILE's rules, in file order, read and checked at start (absent: no file). */
  siteRules?: readonly SiteRule[];
};

/** Environment variable → config path, as the schema's fields declare them. */
export const ENV_NAMES: Record<string, string> = envNames(CrawlerConfigSchema);

/** Settings whose values never appear in an error message. */
const SECRET_SETTINGS = new Set(['controlPlane.token', 'downloader.proxyUrl']);

const LIST_SETTINGS = new Set(['filter.blockedExtensions', 'filter.allowedDomains', 'filter.stripParams', 'plugins.enabled']);

/** Settings listed one a line, as written: a URL rule may hold commas and capitals. */
const LINE_SETTINGS = new Set(['filter.include', 'filter.exclude']);

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

/**
 * Parses the hosts(5) format: "IP name [aliases…]" lines, '#' comments. A name on several lines takes the
 * first line's address, as the system's resolver (glibc) answers from the first line that names it.
 */
export function parseHostsFile(text: string): Record<string, string> {
  const hosts: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const [ip, ...names] = raw.replace(/#.*/, '').trim().split(/\s+/);
    for (const name of ip ? names : []) {
      const key = name.toLowerCase();
      if (!Object.hasOwn(hosts, key)) hosts[key] = ip;
    }
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
  if (LINE_SETTINGS.has(path))
    return raw
      .split('\n')
      .map((s) => s.trim())
      .filter(Boolean);
  if (LIST_SETTINGS.has(path))
    return raw
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean);
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
    sites: {},
    crawl: {},
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
  const config: CrawlerConfig = result.data!;
  if (config.frontier.leaseMs <= config.downloader.totalTimeoutMs) {
    // A lease that can run out while its fetch is still allowed to run would let a second fetch of the host start.
    throw new ConfigError([`FRONTIER_LEASE_MS: must be longer than DOWNLOADER_TOTAL_TIMEOUT_MS (got ${config.frontier.leaseMs} ≤ ${config.downloader.totalTimeoutMs})`]);
  }
  if (config.frontier.batchMemoryMs <= config.queueInfraOutageMaxMs) {
    // A batch retried after an outage would find its id forgotten, and be enqueued a second time.
    throw new ConfigError([
      `FRONTIER_BATCH_MEMORY_MS: must be longer than QUEUE_INFRA_OUTAGE_MAX_MS (got ${config.frontier.batchMemoryMs} ≤ ${config.queueInfraOutageMaxMs})`,
    ]);
  }
  if (config.seen.answerMemoryMs <= config.queueInfraOutageMaxMs) {
    // A batch retried through an outage would find its answer forgotten, its URLs seen, and send none of them.
    throw new ConfigError([
      `URL_SEEN_ANSWER_MEMORY_MS: must be longer than QUEUE_INFRA_OUTAGE_MAX_MS (got ${config.seen.answerMemoryMs} ≤ ${config.queueInfraOutageMaxMs})`,
    ]);
  }
  resolveControlPlaneToken(config);
  if (config.sites.file) config.siteRules = readSiteRules(config);
  if (config.dns.hostsFile) {
    try {
      config.dns.hosts = { ...parseHostsFile(readFileSync(config.dns.hostsFile, 'utf8')), ...config.dns.hosts };
    } catch (error) {
      throw new ConfigError([`DNS_HOSTS_FILE: cannot read ${config.dns.hostsFile}: ${(error as Error).message}`]);
    }
  }
  return config;
}

/**
 * The site's `render` setting for `host` (SITE_SETTINGS_FILE's, a FILE_ONLY field): false = never rendered, true =
 * every HTML page rendered, undefined = the render plugin's own choice. For plugins, which see the site settings
 * only through the configuration.
 */
export function siteRenderSetting(config: Pick<CrawlerConfig, 'siteRules'>, host: string): boolean | undefined {
  return config.siteRules ? resolveSiteSettings(config.siteRules, host).settings.render : undefined;
}

/**
 * SITE_SETTINGS_FILE's rules. A site's delay floor under FRONTIER_MIN_DELAY_MS is refused as an operator's
 * override is (the frontier would hold the floor anyway: said here, not found out later).
 */
function readSiteRules(config: CrawlerConfig): SiteRule[] {
  const file = config.sites.file!;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError([`SITE_SETTINGS_FILE: cannot read ${file}: ${(error as Error).message}`]);
  }
  try {
    const rules = parseSiteSettingsFile(text, file);
    const { minDelayMs, allowDelayBelowMin } = config.frontier;
    const below = allowDelayBelowMin ? [] : rules.filter((r) => r.settings.minDelayMs !== undefined && r.settings.minDelayMs < minDelayMs);
    if (below.length) {
      throw new SiteSettingsFileError(
        file,
        below.map(
          (r) =>
            `${r.at ?? file}: sites."${r.pattern.text}".minDelayMs: ${r.settings.minDelayMs} ms is below FRONTIER_MIN_DELAY_MS (${minDelayMs} ms); a site may only raise the floor unless FRONTIER_ALLOW_DELAY_BELOW_MIN=true`,
        ),
      );
    }
    // A site that asks for rendering with no renderer would be crawled as fetched: said at start instead.
    const render = config.plugins.enabled.includes('render') ? [] : rules.filter((r) => r.settings.render === true);
    if (render.length) {
      throw new SiteSettingsFileError(
        file,
        render.map((r) => `${r.at ?? file}: sites."${r.pattern.text}".render: true needs the render plugin: add render to PLUGINS, or drop the setting`),
      );
    }
    return rules;
  } catch (error) {
    if (error instanceof SiteSettingsFileError) throw new ConfigError([`SITE_SETTINGS_FILE: ${error.message}`]);
    throw error;
  }
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
  if (cp.protectReads === true && !cp.token) {
    throw new ConfigError(['CONTROL_PLANE_PROTECT_READS: needs CONTROL_PLANE_TOKEN (or CONTROL_PLANE_TOKEN_FILE): there is no token to protect the reads with']);
  }
}

export const CRAWLER_CONFIG = Symbol('CRAWLER_CONFIG');
