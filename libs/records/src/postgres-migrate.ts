import { readdirSync } from 'node:fs';
import { extname, join } from 'node:path';
import runMigrations from 'node-pg-migrate';
import { Client } from 'pg';

/** The migrations of the records tables (plain CommonJS, loaded by node-pg-migrate as they are). */
const RECORDS_MIGRATIONS_DIR = join(__dirname, '..', 'migrations');

/**
 * Any fixed number, the same in every process. Alone, it is the lock every version before one schema per crawl
 * took to migrate the default schema, and the one an adoption of those tables takes; with a hash of a schema's
 * name as its second key, the lock of that schema's migrations (crawls of other prefixes migrate in parallel).
 */
const MIGRATION_LOCK = 0x7265_6364;

/** Where every version before one schema per crawl kept the records tables, whatever its CRAWLER_PREFIX. */
const OLD_LAYOUT_SCHEMA = 'public';

/** The tables those versions made there (each with its partitions): a fixed list, that layout is no longer made. */
const OLD_LAYOUT_TABLES = ['records_migrations', 'pages', 'content_owners', 'duplicates', 'captures', 'simhash_bands'];

/**
 * Brings the records tables of `schema` up to date, once however many processes start at once: each waits for
 * the schema's session advisory lock, the first applies what is missing, the others then find nothing to do.
 * (node-pg-migrate's own lock makes a second process fail instead of wait.) A schema without records adopts
 * those of the old layout first, when the database has them (`adoptOldLayout`). Answers whether it did.
 */
export async function migrateRecords(client: Client, schema: string, log: (message: string) => void = () => {}): Promise<boolean> {
  await client.query('SELECT pg_advisory_lock($1, hashtext($2))', [MIGRATION_LOCK, schema]);
  // A failed migration leaves the session in an aborted transaction: the caller ends it, which frees the lock.
  const adopted = await adoptOldLayout(client, schema);
  await refuseUnknownMigrations(client, schema);
  await runMigrations({
    dbClient: client,
    dir: RECORDS_MIGRATIONS_DIR,
    direction: 'up',
    migrationsTable: 'records_migrations',
    schema,
    createSchema: true,
    noLock: true,
    // A migration of this version missing before one recorded as done (a branch merged late) fails, naming both.
    checkOrder: true,
    log,
  });
  await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [MIGRATION_LOCK, schema]);
  return adopted;
}

/**
 * Moves the records tables of the old layout (in `public`, with its `records_migrations`) into `schema` when
 * `schema` has no records of its own yet: the first crawl to start on such a database after the upgrade takes
 * them, rows, partitions, indexes and migration history as they are (`ALTER TABLE … SET SCHEMA`, in one
 * transaction). Under the old layout's own lock, so a process of an older version migrating `public` meanwhile,
 * or a crawl of another prefix adopting at the same moment, waits for it and then finds them gone.
 */
async function adoptOldLayout(client: Client, schema: string): Promise<boolean> {
  const { rows: own } = await client.query<{ found: boolean }>('SELECT to_regclass($1) IS NOT NULL AS found', [`${quote(schema)}.records_migrations`]);
  if (own[0].found) return false;
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<{ name: string }>(
      `SELECT c.relname AS name
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND (c.relname = ANY($2::text[]) OR c.oid IN (
         SELECT i.inhrelid FROM pg_inherits i JOIN pg_class parent ON parent.oid = i.inhparent
         WHERE parent.relnamespace = n.oid AND parent.relname = ANY($2::text[])))`,
      [OLD_LAYOUT_SCHEMA, OLD_LAYOUT_TABLES],
    );
    // Only a migration history makes them the old layout's (a table of that name alone may be anyone's).
    if (!rows.some((row) => row.name === 'records_migrations')) {
      await client.query('ROLLBACK');
      return false;
    }
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quote(schema)}`);
    for (const { name } of rows) await client.query(`ALTER TABLE ${quote(OLD_LAYOUT_SCHEMA)}.${quote(name)} SET SCHEMA ${quote(schema)}`);
    await client.query('COMMIT');
    return true;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
  }
}

/**
 * Fails when the database records a migration this version does not have: it was migrated by a newer
 * version of the crawler, whose tables this one may misread or break. node-pg-migrate itself only checks
 * the migrations both know.
 */
async function refuseUnknownMigrations(client: Client, schema: string): Promise<void> {
  const { rows } = await client.query<{ name: string }>(`SELECT name FROM ${quote(schema)}.records_migrations ORDER BY run_on, id`).catch((error: { code?: string }) => {
    // 42P01: no such table (a fresh database), 3F000: no such schema yet.
    if (error.code === '42P01' || error.code === '3F000') return { rows: [] };
    throw error;
  });
  // node-pg-migrate names a migration by its file name without the extension, whatever its kind (.js, .sql).
  const known = new Set(readdirSync(RECORDS_MIGRATIONS_DIR).map((file) => file.slice(0, file.length - extname(file).length)));
  const unknown = rows.map((r) => r.name).filter((name) => !known.has(name));
  if (unknown.length) {
    throw new Error(
      `the database has ${unknown.length === 1 ? 'a migration' : 'migrations'} recorded in records_migrations that this version does not know (${unknown.join(', ')}): ` +
        'it was migrated by a newer version of the crawler. Run that version, or restore the database from before it.',
    );
  }
}

/**
 * Why `schema` cannot hold a crawl's records, or null: a name PostgreSQL keeps whole (at most 63 bytes, which
 * `[A-Za-z0-9_-]` quoted keeps as written, case included), not one of its own (`pg_…`, `information_schema`),
 * and not `public`, where the old layout's tables are found (`adoptOldLayout`).
 */
export function recordsSchemaProblem(schema: string): string | null {
  if (!/^[A-Za-z0-9_-]{1,63}$/.test(schema)) return 'must be 1 to 63 letters, digits, _ or -';
  if (schema.startsWith('pg_') || schema === 'information_schema') return 'is a name PostgreSQL keeps for its own schemas (pg_…, information_schema)';
  if (schema === OLD_LAYOUT_SCHEMA) return 'is the default schema, where the tables written before one schema per crawl are found: pick another name';
  return null;
}

/** A quoted SQL identifier. */
function quote(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
