import { Client } from 'pg';
import { hashBucketsFor, MemoryStateStore, RedisStateStore, StateStore } from '@crawler/state';
import { createDatabase, dropDatabase, dropSchema, POSTGRES_URL, uniqueSchema } from './postgres-test-database';
import { migrateRecords } from './postgres-migrate';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileRecordsStore } from './file-records.driver';
import { PostgresRecordsStore, RecordsSettingError } from './postgres-records.driver';
import { RedisRecordsStore } from './redis-records.driver';
import { recordsStoreContract } from './records-store.contract';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const REDIS_CLUSTER_URL = process.env.REDIS_CLUSTER_URL || 'redis+cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002';
const uniquePrefix = () => `t18r-records-${process.pid}-${Math.random().toString(36).slice(2)}`;

let filesDir: string;
recordsStoreContract(
  'files',
  async (crawl) => new FileRecordsStore(join(crawl ? filesDir : (filesDir = mkdtempSync(join(tmpdir(), 'records-'))), crawl ?? 'records')),
  async () => rmSync(filesDir, { recursive: true, force: true }),
);

/** A Redis records store over its own state store (another crawl's under its own prefix), cleared and closed after the test. */
function onRedis(url: string): [(crawl?: string) => Promise<RedisRecordsStore>, () => Promise<void>] {
  let prefix: string;
  let states: StateStore[] = [];
  return [
    async (crawl) => {
      if (!crawl) prefix = uniquePrefix();
      const state = new RedisStateStore({ url, prefix: crawl ? `${prefix}-${crawl}` : prefix });
      states.push(state);
      return new RedisRecordsStore({ state, buckets: hashBucketsFor(url) });
    },
    async () => {
      for (const state of states) {
        await state.clear();
        await state.close();
      }
      states = [];
    },
  ];
}
recordsStoreContract('redis', ...onRedis(REDIS_URL));
recordsStoreContract('redis cluster', ...onRedis(REDIS_CLUSTER_URL));

let schema: string;
recordsStoreContract(
  'postgres',
  // Another crawl's store: the same database, the schema its prefix names.
  async (crawl) => PostgresRecordsStore.open({ url: POSTGRES_URL, schema: crawl ? `${schema}-${crawl}` : (schema = uniqueSchema('records')), poolSize: 4 }),
  async () => {
    await dropSchema(schema);
    await dropSchema(`${schema}-Other-Crawl`);
  },
);

describe('RedisRecordsStore', () => {
  it('reads and writes the keys content-seen and the WARC archive always kept, so a crawl resumes on its data', async () => {
    const state = new MemoryStateStore();
    const contentSeen = state.namespace('content-seen');
    await contentSeen.hashSet('urls', 'http://old.test/', JSON.stringify({ fetchedAt: '2025-01-01T00:00:00.000Z', status: 200, contentKey: 'k', etag: '"e"' }));
    await contentSeen.hashSet('duplicates', 'http://bare.test/', 'http://old.test/');
    await contentSeen.hashSet('original', 'h-old', 'http://old.test/');
    const store = new RedisRecordsStore({ state, buckets: 1 });
    const [old, bare] = await store.lookup(['http://old.test/', 'http://bare.test/']);
    expect(old.page).toEqual({
      url: 'http://old.test/',
      fetchedAt: '2025-01-01T00:00:00.000Z',
      status: 200,
      contentKey: 'k',
      etag: '"e"',
      changes: 0,
      changedAt: '2025-01-01T00:00:00.000Z',
    });
    expect(bare.duplicateOf).toEqual({ kind: 'exact', original: 'http://old.test/' });
    expect(await store.claimContent([{ contentHash: 'h-old', url: 'http://new.test/' }])).toEqual(['http://old.test/']);
    await store.recordCaptures([{ contentHash: 'h', url: 'http://a.test/', date: 'd', digest: 'g', recordId: 'r' }]);
    expect(JSON.parse((await state.namespace('warc').hashGet('captures', 'h'))!)).toEqual({ url: 'http://a.test/', date: 'd', digest: 'g', recordId: 'r' });
  });
});

describe('PostgresRecordsStore', () => {
  let schema: string;
  let client: Client;

  beforeEach(async () => {
    schema = uniqueSchema('pg');
    client = new Client({ connectionString: POSTGRES_URL });
    await client.connect();
  });

  afterEach(async () => {
    await client.end();
    await dropSchema(schema);
  });

  it('keeps each table in 16 hash partitions with its primary key as its only index', async () => {
    const store = await PostgresRecordsStore.open({ url: POSTGRES_URL, schema });
    await store.close();
    const { rows } = await client.query(
      `SELECT parent.relname AS "table", count(*)::int AS partitions
       FROM pg_inherits JOIN pg_class parent ON parent.oid = inhparent JOIN pg_namespace n ON n.oid = parent.relnamespace
       WHERE n.nspname = $1 AND parent.relkind = 'p' GROUP BY parent.relname ORDER BY 1`,
      [schema],
    );
    expect(rows).toEqual(['captures', 'content_owners', 'duplicates', 'pages', 'simhash_bands'].map((table) => ({ table, partitions: 16 })));
    const indexes = await client.query(`SELECT tablename, indexname FROM pg_indexes WHERE schemaname = $1 AND tablename IN ('pages', 'simhash_bands') ORDER BY 1`, [
      schema,
    ]);
    expect(indexes.rows).toEqual([
      { tablename: 'pages', indexname: 'pages_pkey' },
      { tablename: 'simhash_bands', indexname: 'simhash_bands_pkey' },
    ]);
  });

  it('migrates once when many processes start at once', async () => {
    const stores = await Promise.all(Array.from({ length: 4 }, () => PostgresRecordsStore.open({ url: POSTGRES_URL, schema, poolSize: 1 })));
    await Promise.all(stores.map((s) => s.close()));
    const { rows } = await client.query(`SELECT name FROM "${schema}".records_migrations ORDER BY id`);
    expect(rows.map((r) => r.name)).toEqual(['1764100000000_records', '1764200000000_simhash-bands']);
  });

  it('refuses to start, naming RECORDS_URL, when the database cannot be reached', async () => {
    await expect(PostgresRecordsStore.open({ url: 'postgres://postgres:secret@127.0.0.1:1/none', schema, connectTimeoutMs: 1000 })).rejects.toThrow(RecordsSettingError);
    await expect(PostgresRecordsStore.open({ url: 'postgres://postgres:secret@127.0.0.1:1/none', schema, connectTimeoutMs: 1000 })).rejects.toThrow(
      /^RECORDS_URL postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/none: cannot connect/,
    );
  });

  it('refuses to start, naming RECORDS_URL, when a migration fails', async () => {
    // A table of the same name in the way: the migration's CREATE TABLE fails.
    await client.query(`CREATE SCHEMA "${schema}"; CREATE TABLE "${schema}".pages (x int)`);
    await expect(PostgresRecordsStore.open({ url: POSTGRES_URL, schema })).rejects.toThrow(/^RECORDS_URL .*: a migration of the records tables failed: .*pages/);
  });

  it("refuses a schema name PostgreSQL would not keep as given, or keeps for itself, or the old layout's", async () => {
    for (const bad of ['public', 'pg_crawl', 'information_schema', 'x'.repeat(64), 'a:b', '']) {
      await expect(PostgresRecordsStore.open({ url: POSTGRES_URL, schema: bad })).rejects.toThrow(/^records schema /);
    }
  });
});

/**
 * A database written before one schema per crawl: the records tables in `public`, whatever the CRAWLER_PREFIX
 * (built here by the same migrations run into `public`, as that version ran them). Each test has a database of
 * its own: a `public` with records in the tests' shared database would be taken by whichever test opened first.
 */
describe('PostgresRecordsStore on a database of the old layout', () => {
  let database: { name: string; url: string };
  let client: Client;
  const page = { url: 'http://old.test/', fetchedAt: '2025-06-01T00:00:00.000Z', contentKey: 'seg-0#h-old', contentHash: 'h-old' };

  beforeEach(async () => {
    database = await createDatabase('old_layout');
    client = new Client({ connectionString: database.url });
    await client.connect();
    await migrateRecords(client, 'public');
    await client.query('INSERT INTO public.pages (url, fetched_at, status, content_key, content_hash, changes, changed_at) VALUES ($1, $2, 200, $3, $4, 2, $2)', [
      page.url,
      page.fetchedAt,
      page.contentKey,
      page.contentHash,
    ]);
    await client.query(`INSERT INTO public.content_owners VALUES ('h-old', 'http://old.test/');
      INSERT INTO public.duplicates (url, kind, original) VALUES ('http://copy.test/', 'exact', 'http://old.test/')`);
  });

  afterEach(async () => {
    await client.end();
    await dropDatabase(database.name);
  });

  const tablesIn = async (schema: string) => (await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = $1`, [schema])).rows[0].n;

  it('gives its tables, rows and all, to the first crawl that starts on it; another crawl starts empty beside it', async () => {
    const notices: string[] = [];
    const adopter = await PostgresRecordsStore.open({ url: database.url, schema: 'My-Crawl', poolSize: 1, notice: (line) => notices.push(line) });
    try {
      const [old, copy] = await adopter.lookup([page.url, 'http://copy.test/']);
      expect(old.page).toMatchObject({ contentKey: 'seg-0#h-old', changes: 2 });
      expect(copy.duplicateOf).toEqual({ kind: 'exact', original: page.url });
      expect(await adopter.claimContent([{ contentHash: 'h-old', url: 'http://new.test/' }])).toEqual([page.url]);
      expect(notices).toEqual([expect.stringMatching(/moved into "My-Crawl"/)]);
    } finally {
      await adopter.close();
    }
    // Every table (16 partitions of 5 tables, the 5 tables, records_migrations) moved; none left behind.
    expect(await tablesIn('public')).toBe(0);
    expect(await tablesIn('My-Crawl')).toBe(5 * 16 + 5 + 1);
    const other = await PostgresRecordsStore.open({ url: database.url, schema: 'crawler', poolSize: 1 });
    try {
      expect((await other.lookup([page.url]))[0]).toEqual({ page: null, duplicateOf: null });
    } finally {
      await other.close();
    }
    const again = await PostgresRecordsStore.open({ url: database.url, schema: 'My-Crawl', poolSize: 1 });
    expect((await again.lookup([page.url]))[0].page).toMatchObject({ contentKey: 'seg-0#h-old' });
    await again.close();
  });

  it('is taken by exactly one of several crawls starting on it at once', async () => {
    const crawls = ['crawl-a', 'crawl-b', 'crawl-c'];
    const stores = await Promise.all(crawls.flatMap((schema) => [1, 2].map(() => PostgresRecordsStore.open({ url: database.url, schema, poolSize: 1 }))));
    try {
      const found = await Promise.all(stores.map(async (store) => (await store.lookup([page.url]))[0].page !== null));
      // One crawl (both its processes) has the rows, the others none.
      const byCrawl = crawls.map((_, at) => `${found[2 * at]},${found[2 * at + 1]}`);
      expect(byCrawl.sort()).toEqual(['false,false', 'false,false', 'true,true']);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
    expect(await tablesIn('public')).toBe(0);
  });

  it('brings tables adopted from an older migration up to date in their new schema', async () => {
    await client.query(`DROP TABLE public.simhash_bands CASCADE; DELETE FROM public.records_migrations WHERE name = '1764200000000_simhash-bands'`);
    const store = await PostgresRecordsStore.open({ url: database.url, schema: 'crawler', poolSize: 1 });
    try {
      expect((await store.lookup([page.url]))[0].page).toMatchObject({ contentKey: 'seg-0#h-old' });
      expect(await store.claimSimhashes([{ simhash: '0123456789abcdef', owner: 'h-old' }], 3)).toEqual(['h-old']);
    } finally {
      await store.close();
    }
    const { rows } = await client.query('SELECT name FROM crawler.records_migrations ORDER BY id');
    expect(rows.map((r) => r.name)).toEqual(['1764100000000_records', '1764200000000_simhash-bands']);
  });
});
