import { readdirSync } from 'node:fs';
import { extname, join } from 'node:path';
import runMigrations from 'node-pg-migrate';
import { Client } from 'pg';

/** The migrations of the records tables (plain CommonJS, loaded by node-pg-migrate as they are). */
const RECORDS_MIGRATIONS_DIR = join(__dirname, '..', 'migrations');

/** Any fixed number, the same in every process: the advisory lock the records migrations run under. */
const MIGRATION_LOCK = 0x7265_6364;

/**
 * Brings the records tables up to date, once however many processes start at once: each waits for a
 * session advisory lock, the first applies what is missing, the others then find nothing to do.
 * (node-pg-migrate's own lock makes a second process fail instead of wait.)
 */
export async function migrateRecords(client: Client, schema: string, log: (message: string) => void = () => {}): Promise<void> {
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  // A failed migration leaves the session in an aborted transaction: the caller ends it, which frees the lock.
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
  await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
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

function quote(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
