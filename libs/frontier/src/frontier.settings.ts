import { z } from 'zod';
import { bool, checkedList, int, isCidr, ms } from '@crawler/settings';

/** `config.frontier`: politeness, budgets, queues, leases, recrawl (assembled by @crawler/config). */
export const frontierSettings = z.object({
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
   * [frontier.md](frontier.md#shards-on-a-redis-cluster)). A crawl keeps the count it began with, recorded in
   * Redis: unset, every process reads it; set to another count, the frontier and the control plane refuse to
   * start. On a cluster you mean to grow, set it to the masters planned before the crawl begins: the frontier
   * lives on at most this many masters.
   * @defaultValue the crawl's recorded count; for a new crawl `1` on one Redis node (the unsharded key layout), one a master on a Redis Cluster
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
  perIpCdnCidrs: checkedList(isCidr, 'is not a CIDR (ADDRESS/PREFIX)').default([]).meta({ env: 'FRONTIER_PER_IP_CDN_CIDRS' }),
  /**
   * Address ranges always held to the base per-IP rule, however many domains they serve, comma-separated CIDRs
   * (a server known to be small; wins over `FRONTIER_PER_IP_CDN_CIDRS`).
   * @defaultValue []
   */
  perIpStrictCidrs: checkedList(isCidr, 'is not a CIDR (ADDRESS/PREFIX)').default([]).meta({ env: 'FRONTIER_PER_IP_STRICT_CIDRS' }),
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
   * shows them). Kept short because it costs Redis memory for every host (≈ 150 B an entry; a host's list runs
   * up to half as long again between trims, a trim every few pushes rather than at each); the fetch log keeps
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
});
