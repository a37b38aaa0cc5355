import zlib from 'node:zlib';
import { z } from 'zod';
import { parseRedisUrl } from '@crawler/redis';
import { bool, int } from '@crawler/settings';

/**
 * Whether this Node.js has zstd in zlib (22.15 and later), asked as the content store asks it: a settings file
 * imports no library beyond the settings helpers, and the check must stop the process at start.
 */
const zstdBuiltIn = () => typeof (zlib as { zstdCompressSync?: unknown }).zstdCompressSync === 'function';

/** Where the crawl keeps its queues, state, records and pages: read by the runtime, which picks the drivers. */
export const storesSettings = z.object({
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
});

/** How pages, staged bodies and WARC files are written to the content store. */
export const storageSettings = z.object({
  /**
   * How stored pages and staged bodies are compressed: `gzip`, `zstd` (Node.js's own, 22.15 or later; no native
   * addon) or `auto`, zstd where the runtime has it (the images' Node 24) and gzip elsewhere (Node 20). Each
   * segment or bundle says in its name which codec wrote it (`.gz`, `.zst`), and every process reads both, so the
   * codec can change between runs of a crawl. `zstd` on a Node.js without it stops the process at start. See
   * [content.md](content.md#reading-stored-pages-by-hand).
   * @defaultValue 'auto'
   */
  codec: z
    .enum(['auto', 'gzip', 'zstd'])
    .default('auto')
    .refine((codec) => codec !== 'zstd' || zstdBuiltIn(), {
      message: `zstd needs Node.js 22.15 or later (zlib.zstdCompress), this is ${process.version}: set gzip or auto, or run a newer Node.js`,
    })
    .meta({ env: 'CONTENT_CODEC' }),
  /**
   * gzip level of stored pages (and staged bodies) when the codec is gzip: 1 (fastest) … 9 (smallest); on HTML, 3
   * costs about what 1 does and is a little smaller.
   * @defaultValue 3
   */
  gzipLevel: int(1).max(9).default(3).meta({ env: 'CONTENT_GZIP_LEVEL' }),
  /**
   * zstd level of stored pages (and staged bodies) when the codec is zstd: 1 (fastest) … 19 (smallest; 20 to 22,
   * zstd's `--ultra` levels, compress with far more memory and are left out). 3, zstd's own default, stores HTML a
   * little smaller than gzip 3 for about half of its CPU; 1 is faster still and about as large as gzip 1.
   * @defaultValue 3
   */
  zstdLevel: int(1).max(19).default(3).meta({ env: 'CONTENT_ZSTD_LEVEL' }),
  /**
   * Worker threads compressing fetched pages (gzip or zstd), in a process that stages or stores them (0: zlib's
   * async API, which costs the event loop about as much as compressing, and the whole process twice as much).
   * Started on first use.
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
});
