import { Client } from 'pg';

/*
 * For tests of whatever keeps records in PostgreSQL (this library's, the services', end-to-end): a schema or
 * a database of their own on the tests' server, dropped after.
 */

/** The PostgreSQL the tests use (`.ci/run` creates the database `test` when it starts a server). */
export const POSTGRES_URL = process.env.POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test';

/** A fresh schema name per test: tables of different tests (and test files) never meet. */
export function uniqueSchema(tag: string): string {
  return `t18r_${tag}_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
}

/** Drops a schema a test created, with everything in it. */
export function dropSchema(schema: string): Promise<void> {
  return admin(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

/** A fresh database on the tests' server, for a test that runs the records in `public` (as a crawl does); its URL. */
export async function createDatabase(tag: string): Promise<{ name: string; url: string }> {
  const name = uniqueSchema(tag);
  await admin(`CREATE DATABASE "${name}"`);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return { name, url: url.href };
}

/** Drops a database a test created (its connections closed first, or it refuses). */
export async function dropDatabase(name: string): Promise<void> {
  await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}

async function admin(sql: string): Promise<void> {
  const client = new Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
