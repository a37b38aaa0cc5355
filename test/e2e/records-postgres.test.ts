import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Client } from 'pg';
import { PostgresRecordsStore } from '@crawler/records';
import { createDatabase, dropDatabase } from '@crawler/records/testing';
import { TestWeb } from '../web/test-web';
import { clearPrefix, REDIS_URL } from '../support/redis-prefix';
import { keysByMaster } from '../support/redis-keys';
import { TestWebCluster } from '../support/test-web-cluster';

/**
 * The distributed shape (every service its own process, one Redis) with the records in PostgreSQL
 * (RECORDS_URL, a fresh database), its records calls batched across jobs: the crawl completes, every stored
 * page has its row, every duplicate its row, every simhash its band rows, and Redis keeps none of them.
 */
describe('distributed crawl with its records in PostgreSQL', () => {
  const prefix = `t18r-e2e-${process.pid}`;
  let web: TestWeb;
  let cluster: TestWebCluster;
  let database: { name: string; url: string };
  let status: any;
  let rows: { pages: number; duplicates: number; owners: number; simhashBands: number };
  let recordKeys: string[];
  let aPage: { url: string; content_key: string };

  beforeAll(async () => {
    database = await createDatabase('e2e');
    web = await TestWeb.start({ hosts: 20 });
    // Small batches that also linger: content-seen's jobs share statements both ways (a batch full, a linger out).
    const batches = { RECORDS_BATCH_LINGER_MS: '20', RECORDS_BATCH_MAX: '4' };
    cluster = await new TestWebCluster(web).start({ env: { REDIS_URL, RECORDS_URL: database.url, RECORDS_POOL_SIZE: '2', CRAWLER_PREFIX: prefix, ...batches } });
    expect(await cluster.seed(web.seeds())).toBe(201);
    status = await cluster.until((s) => s.complete, 150_000, 500);
    const keys = [...(await keysByMaster(REDIS_URL, prefix)).values()].flat();
    recordKeys = keys.filter((key) => /content-seen:(urls|original|duplicates|simhash)|warc:captures/.test(key));
    const client = new Client({ connectionString: database.url });
    await client.connect();
    // In the schema CRAWLER_PREFIX names.
    const count = async (table: string) => Number((await client.query(`SELECT count(*) AS n FROM "${prefix}".${table}`)).rows[0].n);
    rows = { pages: await count('pages'), duplicates: await count('duplicates'), owners: await count('content_owners'), simhashBands: await count('simhash_bands') };
    [aPage] = (await client.query(`SELECT url, content_key FROM "${prefix}".pages ORDER BY url LIMIT 1`)).rows;
    await client.end();
  }, 240_000);

  afterAll(async () => {
    await cluster?.close();
    await clearPrefix(prefix, REDIS_URL);
    await web?.close();
    if (database) await dropDatabase(database.name);
  });

  it('completes, with a row per stored page and per duplicate, and none of them in Redis', () => {
    expect(status.complete).toBe(true);
    expect(status.totals.stored).toBeGreaterThan(20);
    expect(rows.pages).toBe(status.totals.stored);
    expect(rows.duplicates).toBe((status.totals.duplicate ?? 0) + (status.totals['duplicate.near'] ?? 0));
    expect(rows.owners).toBeGreaterThanOrEqual(rows.pages);
    // Every stored page's simhash filed under its 4 bands (distance 3); a near duplicate's never was.
    expect(rows.simhashBands).toBe(4 * rows.pages);
    expect(recordKeys).toEqual([]);
  });

  it('answers GET /urls and /urls/content from its own records while a crawl of another CRAWLER_PREFIX records the same URL in the same database', async () => {
    // What that crawl's content-seen writes: its records in the schema its prefix names.
    const other = await PostgresRecordsStore.open({ url: database.url, schema: `${prefix}-other`, poolSize: 1 });
    try {
      const theirs = { url: aPage.url, fetchedAt: new Date().toISOString(), status: 200, contentKey: 'pages/elsewhere.gz#0.1', contentHash: 'h-theirs' };
      await other.recordPages([theirs]);
      expect((await other.lookup([aPage.url]))[0].page?.contentKey).toBe(theirs.contentKey);
    } finally {
      await other.close();
    }
    const query = `url=${encodeURIComponent(aPage.url)}`;
    const lookup = await fetch(`${cluster.control}/urls?${query}`);
    expect(lookup.status).toBe(200);
    expect(((await lookup.json()) as { record: { contentKey: string } }).record.contentKey).toBe(aPage.content_key);
    const content = await fetch(`${cluster.control}/urls/content?${query}`);
    expect(content.status).toBe(200);
    expect(content.headers.get('x-content-key')).toBe(aPage.content_key);
  });
});

describe('a service whose RECORDS_URL it cannot use', () => {
  const MAIN = join(__dirname, '../../dist/apps/content-seen/src/main.js');
  const prefix = `t18r-refused-${process.pid}`;
  const run = (recordsUrl: string, env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [MAIN], {
      env: { ...process.env, PORT: '0', REDIS_URL, CRAWLER_PREFIX: prefix, RECORDS_URL: recordsUrl, ...env },
      encoding: 'utf8',
      timeout: 30_000,
    });

  it('waits RECORDS_STARTUP_WAIT_MS, then refuses to start (exit 2), naming the setting, when the database does not answer', () => {
    const started = Date.now();
    const refused = run('postgres://crawler:secret@127.0.0.1:1/crawl', { RECORDS_STARTUP_WAIT_MS: '2000' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(
      /content-seen: refusing to start: RECORDS_URL postgres:\/\/crawler:\*\*\*@127\.0\.0\.1:1\/crawl: cannot connect within 2000 ms \(RECORDS_STARTUP_WAIT_MS\)/,
    );
  });

  it("refuses to start (exit 2), naming CRAWLER_PREFIX, when the prefix cannot name the crawl's schema", () => {
    const refused = run('postgres://crawler:secret@127.0.0.1:1/crawl', { CRAWLER_PREFIX: 'public' });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(
      /content-seen: refusing to start: CRAWLER_PREFIX "public" names the crawl's schema in RECORDS_URL's database, and is the default schema/,
    );
  });

  it('refuses to start (exit 2), naming the setting, when a migration fails', async () => {
    const database = await createDatabase('refused');
    try {
      const client = new Client({ connectionString: database.url });
      await client.connect();
      await client.query(`CREATE SCHEMA "${prefix}"; CREATE TABLE "${prefix}".pages (x int)`); // in the way of the migration's own
      await client.end();
      const refused = run(database.url);
      expect(refused.status).toBe(2);
      expect(refused.stderr).toMatch(/content-seen: refusing to start: RECORDS_URL .*: a migration of the records tables failed: .*pages/);
    } finally {
      await dropDatabase(database.name);
    }
  });

  it('refuses to start (exit 2) on a database migrated by a newer version, or with a table of the wrong shape', async () => {
    const database = await createDatabase('newer');
    try {
      await (await PostgresRecordsStore.open({ url: database.url, schema: prefix, poolSize: 1 })).close();
      const client = new Client({ connectionString: database.url, options: `-c search_path="${prefix}"` });
      await client.connect();
      await client.query(`INSERT INTO records_migrations (name, run_on) VALUES ('9999999999999_from-a-newer-version', now())`);
      const newer = run(database.url);
      expect(newer.status).toBe(2);
      expect(newer.stderr).toMatch(
        /content-seen: refusing to start: RECORDS_URL .*: a migration of the records tables failed: .*\(9999999999999_from-a-newer-version\): it was migrated by a newer version of the crawler/,
      );
      await client.query(`DELETE FROM records_migrations WHERE name = '9999999999999_from-a-newer-version'`);
      await client.query('ALTER TABLE duplicates ALTER COLUMN distance TYPE text');
      await client.end();
      const misshapen = run(database.url);
      expect(misshapen.status).toBe(2);
      expect(misshapen.stderr).toMatch(
        /content-seen: refusing to start: RECORDS_URL .*: the table duplicates is not the one this version expects: distance is of type text, not smallint/,
      );
    } finally {
      await dropDatabase(database.name);
    }
  });
});
