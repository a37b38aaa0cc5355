import { isIP } from 'node:net';
import { z } from 'zod';
import { bool, int, ms } from '@crawler/settings';

/** The HTTP server of every process: /health and /metrics, and the control plane's API. */
export const httpSettings = z.object({
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
});

/** Per-site settings (docs/crawl-config.md), the same for every service that applies them. */
export const sitesSettings = z.object({
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
});

/** The embedded crawl's own limits (`npm run crawl`); the services of the distributed shape run until stopped. */
export const crawlSettings = z.object({
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
});

/** What every process does alike: its HTTP server, shutdown, outage watch, logging, queues. */
export const processSettings = z.object({
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
   * The messages a process sends to one queue within this long of the first travel as one BullMQ job (an
   * envelope): a job costs Redis and the consumer far more than a message does. Each hop of a page waits up to
   * this long; a process that dies before its envelope is in Redis loses nothing, since the message it was
   * handling is not yet complete and is handled again. This is the wait on the hops a host's turn crosses
   * (dns-resolve, fetch, frontier-done) and on plugin queues; see `QUEUE_DISCOVERY_LINGER_MS` for the others.
   * @defaultValue 5
   */
  queueBatchLingerMs: int(0).max(1000).default(5).meta({ env: 'QUEUE_BATCH_LINGER_MS' }),
  /**
   * `QUEUE_BATCH_LINGER_MS` for the hops from a fetched page to its links in the frontier (parse, content-seen,
   * extract-links, filter-urls, seen-urls, frontier-add), which no host waits on. An envelope holds about
   * pages a second × this wait, so a longer wait keeps envelopes full, and Redis's commands a page low, at a
   * slower pace. Its cost is latency: a link reaches the frontier up to six times this much later.
   * @defaultValue 25
   */
  queueDiscoveryLingerMs: int(0).max(1000).default(25).meta({ env: 'QUEUE_DISCOVERY_LINGER_MS' }),
  /** Messages in one envelope at most (see `QUEUE_BATCH_LINGER_MS`). @defaultValue 100 */
  queueBatchMaxMessages: int(1).max(10_000).default(100).meta({ env: 'QUEUE_BATCH_MAX_MESSAGES' }),
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
});
