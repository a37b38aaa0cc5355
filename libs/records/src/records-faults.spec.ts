import { Client, Pool } from 'pg';
import { dropSchema, POSTGRES_URL, uniqueSchema } from './postgres-test-database';
import { MemoryStateStore } from '@crawler/state';
import { PostgresRecordsStore, RecordsSettingError } from './postgres-records.driver';
import { RedisRecordsStore } from './redis-records.driver';
import { guardPool, RecordsDataError, RecordsUnavailableError } from './records-errors';

/**
 * What the records stores do with a server that is away, a database it cannot use, and rows it
 * cannot read: each says what failed and where, at start or at the statement, rather than crashing deep inside.
 */
describe('PostgresRecordsStore faults', () => {
  let schema: string;
  let client: Client;
  const open = (options: Partial<Parameters<typeof PostgresRecordsStore.open>[0]> = {}) =>
    PostgresRecordsStore.open({ url: POSTGRES_URL, schema, poolSize: 1, ...options });

  beforeEach(async () => {
    schema = uniqueSchema('faults');
    client = new Client({ connectionString: POSTGRES_URL });
    await client.connect();
  });

  afterEach(async () => {
    await client.end();
    await dropSchema(schema);
  });

  describe('at start', () => {
    it('waits up to RECORDS_STARTUP_WAIT_MS for a server that does not answer, then names the setting and the wait', async () => {
      const started = Date.now();
      const refused = await open({ url: 'postgres://postgres:secret@127.0.0.1:1/crawl', startupWaitMs: 1500 }).catch((error) => error);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
      expect(refused).toBeInstanceOf(RecordsSettingError);
      expect(refused.message).toMatch(
        /^RECORDS_URL postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/crawl: cannot connect within 1500 ms \(RECORDS_STARTUP_WAIT_MS\) \(.*ECONNREFUSED/,
      );
    });

    it('does not wait on an answer that will not change (no such database)', async () => {
      const url = new URL(POSTGRES_URL);
      url.pathname = `/${uniqueSchema('missing')}`;
      const started = Date.now();
      await expect(open({ url: url.href, startupWaitMs: 20_000 })).rejects.toThrow(/^RECORDS_URL .*: cannot connect \(database "t18r_missing_\w+" does not exist\)/);
      expect(Date.now() - started).toBeLessThan(5000);
    });

    it('refuses a database migrated by a newer version (a migration recorded that this one does not know)', async () => {
      await (await open()).close();
      await client.query(`INSERT INTO "${schema}".records_migrations (name, run_on) VALUES ('9999999999999_from-a-newer-version', now())`);
      await expect(open()).rejects.toThrow(
        /^RECORDS_URL .*: a migration of the records tables failed: the database has a migration recorded in records_migrations that this version does not know \(9999999999999_from-a-newer-version\): it was migrated by a newer version/,
      );
    });

    it('refuses a table of the wrong shape under a migration recorded as done, naming the table and the column', async () => {
      await (await open()).close();
      await client.query(`ALTER TABLE "${schema}".pages ALTER COLUMN fetched_at TYPE text`);
      await expect(open()).rejects.toThrow(/^RECORDS_URL .*: the table pages is not the one this version expects: fetched_at is of type text, not timestamptz$/);
      await client.query(`ALTER TABLE "${schema}".duplicates DROP COLUMN original`);
      await client.query(`ALTER TABLE "${schema}".pages ALTER COLUMN fetched_at TYPE timestamptz USING fetched_at::timestamptz`);
      await expect(open()).rejects.toThrow(/^RECORDS_URL .*: the table duplicates is not the one this version expects: column "original" does not exist$/);
    });
  });

  describe('rows read back', () => {
    it('a bad timestamp is an error naming the table, the key and the column', async () => {
      const store = await open();
      try {
        await client.query(
          `INSERT INTO "${schema}".pages (url, fetched_at, status, content_key, content_hash, changed_at)
           VALUES ('http://a.test/', 'infinity', 200, 'k', 'h', now())`,
        );
        const expected = /^records store: malformed row in pages \(url = "http:\/\/a\.test\/"\): fetched_at is Infinity, not a time$/;
        await expect(store.lookup(['http://a.test/'])).rejects.toThrow(RecordsDataError);
        await expect(store.lookup(['http://a.test/'])).rejects.toThrow(expected);
        await expect(store.validators(['http://a.test/'])).rejects.toThrow(expected);
      } finally {
        await store.close();
      }
    });

    it('a wrong kind of duplicate is an error naming the table and the key, not a silent exact duplicate', async () => {
      const store = await open();
      try {
        // The table's CHECK keeps such rows out; a hand edit that dropped it lets one in.
        await client.query(`ALTER TABLE "${schema}".duplicates DROP CONSTRAINT duplicates_kind_check`);
        await client.query(
          `INSERT INTO "${schema}".duplicates (url, kind, original) VALUES ('http://b.test/', 'fuzzy', 'http://a.test/'), ('http://c.test/', 'near', 'http://a.test/')`,
        );
        await expect(store.lookup(['http://b.test/'])).rejects.toThrow(
          /^records store: malformed row in duplicates \(url = "http:\/\/b\.test\/"\): kind is "fuzzy", not "exact" or "near"$/,
        );
        await expect(store.lookup(['http://c.test/'])).rejects.toThrow(
          /^records store: malformed row in duplicates \(url = "http:\/\/c\.test\/"\): a near duplicate without its distance$/,
        );
      } finally {
        await store.close();
      }
    });
  });

  describe('readiness', () => {
    it('a ping is answered by a statement answered just before, not queued behind a busy pool', async () => {
      const store = await open({ poolSize: 1 });
      try {
        await store.lookup(['http://a.test/']);
        const busy = (store as unknown as { pool: Pool }).pool.query('SELECT pg_sleep(2)');
        const started = Date.now();
        await store.ping!();
        expect(Date.now() - started).toBeLessThan(500);
        await busy;
        // Once that answer is old, a ping asks the server itself.
        await new Promise((r) => setTimeout(r, 1100));
        const asked = jest.spyOn((store as unknown as { pool: Pool }).pool, 'query');
        await store.ping!();
        expect(asked).toHaveBeenCalledWith('SELECT 1');
      } finally {
        await store.close();
      }
    });
  });

  describe('a server that goes away', () => {
    it('fails its statements with RecordsUnavailableError, a connection SQLSTATE, so the queues wait the outage out', async () => {
      const pool = guardPool(new Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/crawl', connectionTimeoutMillis: 1000 }));
      try {
        const error = await pool.query('SELECT 1').catch((e) => e);
        expect(error).toBeInstanceOf(RecordsUnavailableError);
        expect(error).toMatchObject({ code: '08001', message: expect.stringMatching(/^records store: PostgreSQL unavailable: connect ECONNREFUSED/) });
      } finally {
        await pool.end();
      }
    });

    it('a session ended by the server (57P01) is an outage too, and the next statement reconnects', async () => {
      const store = await open({ url: `${POSTGRES_URL}?application_name=${schema}` });
      try {
        // A statement under way when an administrator ends the session, as a fast shutdown does.
        const sleeping = (store as unknown as { pool: Pool }).pool.query('SELECT pg_sleep(5)').catch((e) => e);
        await waitFor(
          async () =>
            (await client.query(`SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'SELECT pg_sleep%'`, [schema]))
              .rowCount === 1,
        );
        const error = await sleeping;
        expect(error).toBeInstanceOf(RecordsUnavailableError);
        expect(error.code).toMatch(/^(57P01|08006)$/);
        expect(await store.lookup(['http://a.test/'])).toEqual([{ page: null, duplicateOf: null }]);
      } finally {
        await store.close();
      }
    });
  });
});

async function waitFor(done: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('RedisRecordsStore faults: rows read back', () => {
  it('a record that is not JSON, has no time, or is of a wrong kind is an error naming the hash and the key', async () => {
    const state = new MemoryStateStore();
    const contentSeen = state.namespace('content-seen');
    await contentSeen.hashSet('urls', 'http://a.test/', '{"fetchedAt": "2025-01-01T00:00:00.000Z", "status": 200');
    await contentSeen.hashSet('urls', 'http://b.test/', JSON.stringify({ fetchedAt: 'yesterday', status: 200, contentKey: 'k' }));
    await contentSeen.hashSet('duplicates', 'http://c.test/', JSON.stringify({ kind: 'fuzzy', original: 'http://a.test/' }));
    const store = new RedisRecordsStore({ state, buckets: 1 });
    await expect(store.lookup(['http://a.test/'])).rejects.toThrow(/^records store: malformed row in content-seen:urls \(url = "http:\/\/a\.test\/"\): not JSON \(/);
    await expect(store.validators(['http://b.test/'])).rejects.toThrow(
      /^records store: malformed row in content-seen:urls \(url = "http:\/\/b\.test\/"\): fetchedAt is "yesterday", not a time$/,
    );
    await expect(store.lookup(['http://c.test/'])).rejects.toThrow(
      /^records store: malformed row in content-seen:duplicates \(url = "http:\/\/c\.test\/"\): kind is "fuzzy", not "exact" or "near"$/,
    );
  });
});
