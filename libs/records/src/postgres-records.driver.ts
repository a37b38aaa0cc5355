import { Client, Pool } from 'pg';
import { migrateRecords, recordsSchemaProblem } from './postgres-migrate';
import { guardPool, isoTime, isRecordsConnectionError, RecordsDataError } from './records-errors';
import {
  Capture,
  ContentClaim,
  DuplicateEntry,
  DuplicateRecord,
  FetchedPage,
  lastByKey,
  NearSimhash,
  PageRecord,
  RecordsStore,
  SimhashClaim,
  UrlRecords,
  Validators,
  validatorsOf,
} from './records-store';
import { nearest, signedToSimhash, simhashBuckets, simhashLayout, simhashToSigned } from './simhash-bands';

export interface PostgresRecordsOptions {
  /** RECORDS_URL: `postgres://user:password@host:5432/database`. */
  url: string;
  /** Connections this process opens at most (RECORDS_POOL_SIZE). @defaultValue 10 */
  poolSize?: number;
  /**
   * The schema the crawl's tables live in, created when missing: its CRAWLER_PREFIX, so crawls of different
   * prefixes share a database as they share a Redis (tests use one each). See `recordsSchemaProblem`.
   */
  schema: string;
  /** How long connecting may take before it fails. @defaultValue 5000 */
  connectTimeoutMs?: number;
  /**
   * How long `open` keeps trying while the server does not answer (RECORDS_STARTUP_WAIT_MS): a service
   * started with its database, or while it restarts, waits for it. @defaultValue 0 (one try)
   */
  startupWaitMs?: number;
  /** node-pg-migrate's lines. */
  log?: (message: string) => void;
  /** A line the operator should see: the tables of the old layout were adopted (see migrateRecords). */
  notice?: (line: string) => void;
}

/**
 * RECORDS_URL names a database the crawl cannot use, or its tables could not be brought up to date (or, with
 * `setting` CRAWLER_PREFIX, the prefix cannot name the crawl's schema).
 */
export class RecordsSettingError extends Error {
  constructor(message: string, setting = 'RECORDS_URL') {
    super(`${setting} ${message}`);
  }
}

/**
 * The records in PostgreSQL, in the tables of `libs/records/migrations` (each hash-partitioned by its key,
 * its primary key its only index). Every call is one statement over the whole batch: rows go in as arrays
 * (`unnest`), claims and upserts are `INSERT … ON CONFLICT`, reads are `WHERE key = ANY($1)`.
 */
export class PostgresRecordsStore implements RecordsStore {
  /** When the server last answered a statement (Date.now()). */
  private answeredAt = 0;
  private readonly pool: Pool;

  private constructor(pool: Pool) {
    this.pool = guardPool(pool, () => (this.answeredAt = Date.now()));
  }

  /**
   * Connects and migrates (under an advisory lock, see migrateRecords). Throws RecordsSettingError, naming the
   * setting, when the database cannot be reached or a migration fails: the service must not start.
   */
  static async open(options: PostgresRecordsOptions): Promise<PostgresRecordsStore> {
    const { schema } = options;
    const problem = recordsSchemaProblem(schema);
    if (problem) throw new Error(`records schema ${JSON.stringify(schema)} ${problem}`);
    const where = describePostgres(options.url);
    const connection = { connectionString: options.url, connectionTimeoutMillis: options.connectTimeoutMs ?? 5000 };
    const client = await connectWithin(connection, where, options.startupWaitMs ?? 0);
    try {
      if (await migrateRecords(client, schema, options.log)) {
        options.notice?.(`records: the tables of the default schema (written before one schema per CRAWLER_PREFIX) were moved into "${schema}", with their rows`);
      }
    } catch (error) {
      throw new RecordsSettingError(`${where}: a migration of the records tables failed: ${(error as Error).message}`);
    } finally {
      await client.end().catch(() => {});
    }
    const pool = new Pool({ ...connection, max: options.poolSize ?? 10, options: `-c search_path="${schema}"` });
    // An idle connection dropped by the server is replaced on next use; the error must not crash the process.
    pool.on('error', () => {});
    const store = new PostgresRecordsStore(pool);
    try {
      await store.checkShape();
    } catch (error) {
      await pool.end().catch(() => {});
      throw error instanceof RecordsShapeError ? new RecordsSettingError(`${where}: ${error.message}`) : error;
    }
    return store;
  }

  /**
   * The server answers (a readiness check): rejects with RecordsUnavailableError while it is away. A statement
   * answered within the last PING_FRESH_MS is answer enough: under load every connection of the pool may be
   * busy, and a ping queued behind them would call a working server unready.
   */
  async ping(): Promise<void> {
    if (Date.now() - this.answeredAt < PING_FRESH_MS) return;
    await this.pool.query('SELECT 1');
  }

  /**
   * Each table has the columns this code reads and writes, of the types it expects: a table left in the way
   * (made by hand, or by another program) under a migration recorded as done would otherwise fail later, on
   * the first page, with an error far from its cause.
   */
  private async checkShape(): Promise<void> {
    for (const [table, columns] of Object.entries(TABLE_SHAPES)) {
      let fields: { name: string; dataTypeID: number }[];
      try {
        ({ fields } = await this.pool.query(`SELECT ${Object.keys(columns).join(', ')} FROM ${table} LIMIT 0`));
      } catch (error) {
        if (isRecordsConnectionError(error)) throw error;
        throw new RecordsShapeError(`the table ${table} is not the one this version expects: ${(error as Error).message}`);
      }
      const wrong = fields
        .filter((f) => columns[f.name] !== f.dataTypeID)
        .map((f) => `${f.name} is of type ${TYPE_NAMES[f.dataTypeID] ?? `oid ${f.dataTypeID}`}, not ${TYPE_NAMES[columns[f.name]]}`);
      if (wrong.length) throw new RecordsShapeError(`the table ${table} is not the one this version expects: ${wrong.join('; ')}`);
    }
  }

  async recordPages(pages: readonly FetchedPage[]): Promise<void> {
    // One row per URL per statement (ON CONFLICT updates a row once): a URL fetched twice in a batch
    // takes a second statement, after the first, so both fetches count in its change history.
    for (const round of rounds(pages, (page) => page.url)) {
      await this.pool.query(
        `INSERT INTO pages AS p (url, fetched_at, status, content_key, content_hash, simhash, etag, last_modified, changes, changed_at)
         SELECT url, fetched_at, status, content_key, content_hash, simhash, etag, last_modified, 0, fetched_at
         FROM unnest($1::text[], $2::timestamptz[], $3::smallint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
           AS t(url, fetched_at, status, content_key, content_hash, simhash, etag, last_modified)
         ON CONFLICT (url) DO UPDATE SET
           fetched_at = excluded.fetched_at, status = excluded.status, content_key = excluded.content_key,
           content_hash = excluded.content_hash, simhash = excluded.simhash, etag = excluded.etag,
           last_modified = excluded.last_modified,
           changes = p.changes + (p.content_hash <> excluded.content_hash)::int,
           changed_at = CASE WHEN p.content_hash <> excluded.content_hash THEN excluded.fetched_at ELSE p.changed_at END`,
        [
          round.map((p) => p.url),
          round.map((p) => p.fetchedAt),
          round.map((p) => p.status),
          round.map((p) => p.contentKey),
          round.map((p) => p.contentHash),
          round.map((p) => p.simhash ?? null),
          round.map((p) => p.etag ?? null),
          round.map((p) => p.lastModified ?? null),
        ],
      );
    }
  }

  async claimContent(claims: readonly ContentClaim[]): Promise<string[]> {
    if (claims.length === 0) return [];
    const { rows } = await this.pool.query<{ content_hash: string; owner: string | null }>(
      `WITH claim AS (
         SELECT DISTINCT ON (content_hash) content_hash, url
         FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t(content_hash, url, n)
         ORDER BY content_hash, n),
       won AS (
         INSERT INTO content_owners (content_hash, url) SELECT content_hash, url FROM claim
         ON CONFLICT (content_hash) DO NOTHING RETURNING content_hash, url)
       SELECT c.content_hash, COALESCE(w.url, o.url) AS owner
       FROM claim c LEFT JOIN won w USING (content_hash) LEFT JOIN content_owners o USING (content_hash)`,
      [claims.map((c) => c.contentHash), claims.map((c) => c.url)],
    );
    const owners = new Map(rows.map((row) => [row.content_hash, row.owner]));
    // A claim lost to a transaction that committed after this statement's snapshot finds no owner in it: read again.
    const unseen = [...owners].filter(([, owner]) => owner === null).map(([hash]) => hash);
    if (unseen.length > 0) (await this.ownersOf(unseen)).forEach((owner, at) => owners.set(unseen[at], owner));
    return claims.map(({ contentHash }) => {
      const owner = owners.get(contentHash);
      if (!owner) throw new Error(`records: content ${contentHash} was claimed but has no owner`);
      return owner;
    });
  }

  async ownersOf(contentHashes: readonly string[]): Promise<(string | null)[]> {
    const { rows } = await this.pool.query<{ content_hash: string; url: string }>('SELECT content_hash, url FROM content_owners WHERE content_hash = ANY($1::text[])', [
      contentHashes,
    ]);
    const owners = new Map(rows.map((row) => [row.content_hash, row.url]));
    return contentHashes.map((hash) => owners.get(hash) ?? null);
  }

  async recordDuplicates(duplicates: readonly DuplicateEntry[]): Promise<void> {
    const rows = lastByKey(duplicates, (d) => d.url);
    if (rows.length === 0) return;
    await this.pool.query(
      `INSERT INTO duplicates (url, kind, original, distance)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::smallint[])
       ON CONFLICT (url) DO UPDATE SET kind = excluded.kind, original = excluded.original, distance = excluded.distance`,
      [
        rows.map((d) => d.url),
        rows.map((d) => d.duplicateOf.kind),
        rows.map((d) => d.duplicateOf.original),
        rows.map((d) => (d.duplicateOf.kind === 'near' ? d.duplicateOf.distance : null)),
      ],
    );
  }

  async lookup(urls: readonly string[]): Promise<UrlRecords[]> {
    const [pages, duplicates] = await Promise.all([
      this.pool.query<PageRow>(`SELECT ${PAGE_COLUMNS} FROM pages WHERE url = ANY($1::text[])`, [urls]),
      this.pool.query<DuplicateRow>('SELECT url, kind, original, distance FROM duplicates WHERE url = ANY($1::text[])', [urls]),
    ]);
    const pageOf = new Map(pages.rows.map((row) => [row.url, pageRecord(row)]));
    const duplicateOf = new Map(duplicates.rows.map((row) => [row.url, duplicateRecord(row)]));
    return urls.map((url) => ({ page: pageOf.get(url) ?? null, duplicateOf: duplicateOf.get(url) ?? null }));
  }

  async validators(urls: readonly string[]): Promise<(Validators | null)[]> {
    const { rows } = await this.pool.query<Pick<PageRow, 'url' | 'fetched_at' | 'content_hash' | 'etag' | 'last_modified' | 'changes' | 'changed_at'>>(
      'SELECT url, fetched_at, content_hash, etag, last_modified, changes, changed_at FROM pages WHERE url = ANY($1::text[])',
      [urls],
    );
    const found = new Map(
      rows.map((row) => [
        row.url,
        validatorsOf({
          fetchedAt: isoTime('pages', 'url', row.url, 'fetched_at', row.fetched_at),
          contentHash: row.content_hash,
          ...(row.etag !== null ? { etag: row.etag } : {}),
          ...(row.last_modified !== null ? { lastModified: row.last_modified } : {}),
          changes: row.changes,
          changedAt: isoTime('pages', 'url', row.url, 'changed_at', row.changed_at),
        }),
      ]),
    );
    return urls.map((url) => found.get(url) ?? null);
  }

  async recordCaptures(captures: readonly Capture[]): Promise<void> {
    const rows = lastByKey(captures, (c) => c.contentHash);
    if (rows.length === 0) return;
    await this.pool.query(
      `INSERT INTO captures (content_hash, url, warc_date, digest, record_id)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
       ON CONFLICT (content_hash) DO UPDATE SET
         url = excluded.url, warc_date = excluded.warc_date, digest = excluded.digest, record_id = excluded.record_id`,
      [rows.map((c) => c.contentHash), rows.map((c) => c.url), rows.map((c) => c.date), rows.map((c) => c.digest), rows.map((c) => c.recordId)],
    );
  }

  async capturesOf(contentHashes: readonly string[]): Promise<(Capture | null)[]> {
    const { rows } = await this.pool.query<{ content_hash: string; url: string; warc_date: string; digest: string; record_id: string }>(
      'SELECT content_hash, url, warc_date, digest, record_id FROM captures WHERE content_hash = ANY($1::text[])',
      [contentHashes],
    );
    const found = new Map(rows.map((r) => [r.content_hash, { contentHash: r.content_hash, url: r.url, date: r.warc_date, digest: r.digest, recordId: r.record_id }]));
    return contentHashes.map((hash) => found.get(hash) ?? null);
  }

  async nearSimhashes(simhashes: readonly string[], maxDistance: number): Promise<(NearSimhash | null)[]> {
    const layout = simhashLayout(maxDistance);
    const asked = simhashes.flatMap((simhash, n) => simhashBuckets(layout, simhash).map(([band, value]) => ({ n, band, value })));
    if (asked.length === 0) return [];
    // One statement: each bucket read by the primary key's prefix (its partition pruned at run time).
    const { rows } = await this.pool.query<{ n: number; simhash: string; owner: string }>(
      `SELECT q.n, b.simhash::text AS simhash, b.owner
       FROM unnest($1::int[], $2::smallint[], $3::int[]) AS q(n, band, value)
       JOIN simhash_bands b ON b.band = q.band AND b.value = q.value`,
      [asked.map((a) => a.n), asked.map((a) => a.band), asked.map((a) => a.value)],
    );
    const found = simhashes.map(() => new Map<string, string>());
    for (const row of rows) found[row.n].set(signedToSimhash(row.simhash), row.owner);
    return simhashes.map((simhash, n) =>
      nearest(
        simhash,
        maxDistance,
        [...found[n]].map(([candidate, owner]) => ({ simhash: candidate, owner })),
      ),
    );
  }

  async claimSimhashes(claims: readonly SimhashClaim[], maxDistance: number): Promise<string[]> {
    const layout = simhashLayout(maxDistance);
    // The first claim of each simhash; rows in one global order (simhash, then band), so two batches claiming
    // the same simhashes wait on each other's rows in the same order and never deadlock. Every band's row
    // of a simhash is written in one statement: a conflict on the first (band 0) makes the rest conflict too,
    // so all of them name the first owner.
    const first = [...new Map([...claims].reverse().map((claim) => [claim.simhash, claim])).values()].sort((a, b) =>
      a.simhash < b.simhash ? -1 : a.simhash > b.simhash ? 1 : 0,
    );
    if (first.length === 0) return [];
    const rows = first.flatMap(({ simhash, owner }) =>
      simhashBuckets(layout, simhash).map(([band, value]) => ({ band, value, simhash: simhashToSigned(simhash), owner })),
    );
    await this.pool.query(
      `INSERT INTO simhash_bands (band, value, simhash, owner)
       SELECT band, value, simhash, owner FROM unnest($1::smallint[], $2::int[], $3::bigint[], $4::text[]) WITH ORDINALITY AS t(band, value, simhash, owner, n)
       ORDER BY n
       ON CONFLICT DO NOTHING`,
      [rows.map((r) => r.band), rows.map((r) => r.value), rows.map((r) => r.simhash), rows.map((r) => r.owner)],
    );
    // Whoever won: read from each simhash's first band (committed, by this statement or the one it waited on).
    const firstBands = rows.filter((_, at) => at % layout.bands === 0);
    const { rows: owners } = await this.pool.query<{ simhash: string; owner: string }>(
      `SELECT b.simhash::text AS simhash, b.owner
       FROM unnest($1::smallint[], $2::int[], $3::bigint[]) AS q(band, value, simhash)
       JOIN simhash_bands b ON b.band = q.band AND b.value = q.value AND b.simhash = q.simhash`,
      [firstBands.map((r) => r.band), firstBands.map((r) => r.value), firstBands.map((r) => r.simhash)],
    );
    const ownerOf = new Map(owners.map((row) => [signedToSimhash(row.simhash), row.owner]));
    return claims.map(({ simhash }) => {
      const owner = ownerOf.get(simhash);
      if (owner === undefined) throw new Error(`records: simhash ${simhash} was claimed but has no owner`);
      return owner;
    });
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}

/** How recent a statement's answer stands for a ping. */
const PING_FRESH_MS = 1000;

const PAGE_COLUMNS = 'url, fetched_at, status, content_key, content_hash, simhash, etag, last_modified, changes, changed_at';

interface PageRow {
  url: string;
  fetched_at: Date;
  status: number;
  content_key: string;
  content_hash: string;
  simhash: string | null;
  etag: string | null;
  last_modified: string | null;
  changes: number;
  changed_at: Date;
}

interface DuplicateRow {
  url: string;
  kind: 'exact' | 'near';
  original: string;
  distance: number | null;
}

function pageRecord(row: PageRow): PageRecord {
  return {
    url: row.url,
    fetchedAt: isoTime('pages', 'url', row.url, 'fetched_at', row.fetched_at),
    status: row.status,
    contentKey: row.content_key,
    contentHash: row.content_hash,
    ...(row.simhash !== null ? { simhash: row.simhash } : {}),
    ...(row.etag !== null ? { etag: row.etag } : {}),
    ...(row.last_modified !== null ? { lastModified: row.last_modified } : {}),
    changes: row.changes,
    changedAt: isoTime('pages', 'url', row.url, 'changed_at', row.changed_at),
  };
}

function duplicateRecord(row: DuplicateRow): DuplicateRecord {
  if (row.kind === 'exact') return { kind: 'exact', original: row.original };
  if (row.kind !== 'near') throw new RecordsDataError('duplicates', 'url', row.url, `kind is ${JSON.stringify(row.kind)}, not "exact" or "near"`);
  if (row.distance === null) throw new RecordsDataError('duplicates', 'url', row.url, 'a near duplicate without its distance');
  return { kind: 'near', original: row.original, distance: row.distance };
}

/** The columns each table must have, by the type OID node-postgres reports (text 25, smallint 21, integer 23, timestamptz 1184). */
const TABLE_SHAPES: Record<string, Record<string, number>> = {
  pages: { url: 25, fetched_at: 1184, status: 21, content_key: 25, content_hash: 25, simhash: 25, etag: 25, last_modified: 25, changes: 23, changed_at: 1184 },
  content_owners: { content_hash: 25, url: 25 },
  duplicates: { url: 25, kind: 25, original: 25, distance: 21 },
  captures: { content_hash: 25, url: 25, warc_date: 25, digest: 25, record_id: 25 },
};

const TYPE_NAMES: Record<number, string> = { 20: 'bigint', 21: 'smallint', 23: 'integer', 25: 'text', 1043: 'varchar', 1114: 'timestamp', 1184: 'timestamptz' };

/** A table of the wrong shape (made a RecordsSettingError by open). */
class RecordsShapeError extends Error {}

/**
 * A connected client, trying again every 500 ms (and once more at the end) while the server does not answer
 * (refused, unreachable, starting up) for up to `waitMs`; an answer that will not change (wrong password, no such database) fails at once.
 */
async function connectWithin(connection: { connectionString: string; connectionTimeoutMillis: number }, where: string, waitMs: number): Promise<Client> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const client = new Client(connection);
    // A session the server ends later (a restart) is reported as an event too: it must not crash the process.
    client.on('error', () => {});
    try {
      await client.connect();
      return client;
    } catch (error) {
      await client.end().catch(() => {});
      const away = isRecordsConnectionError(error);
      if (!away || Date.now() >= deadline) {
        const waited = away && waitMs > 0 ? ` within ${waitMs} ms (RECORDS_STARTUP_WAIT_MS)` : '';
        throw new RecordsSettingError(
          `${where}: cannot connect${waited} (${(error as Error).message}). Is PostgreSQL running, and are the host, port, user and database right?`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(500, deadline - Date.now())));
    }
  }
}

/** The items split so that no key appears twice in one round: round k holds each key's (k+1)th item. */
function rounds<T>(items: readonly T[], keyOf: (item: T) => string): T[][] {
  const seen = new Map<string, number>();
  const result: T[][] = [];
  for (const item of items) {
    const key = keyOf(item);
    const round = seen.get(key) ?? 0;
    seen.set(key, round + 1);
    (result[round] ??= []).push(item);
  }
  return result;
}

/** The URL without its password, for messages. */
function describePostgres(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.href;
  } catch {
    return '(not a URL)';
  }
}
