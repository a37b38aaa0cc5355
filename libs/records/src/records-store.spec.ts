import { Client } from 'pg';
import { hashBucketsFor, MemoryStateStore, RedisStateStore, StateStore } from '@crawler/state';
import { dropSchema, POSTGRES_URL, uniqueSchema } from './postgres-test-database';
import { MemoryRecordsStore } from './memory-records.driver';
import { PostgresRecordsStore, RecordsSettingError } from './postgres-records.driver';
import { RedisRecordsStore } from './redis-records.driver';
import { recordsStoreContract } from './records-store.contract';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const REDIS_CLUSTER_URL = process.env.REDIS_CLUSTER_URL || 'redis+cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002';
const uniquePrefix = () => `t18r-records-${process.pid}-${Math.random().toString(36).slice(2)}`;

recordsStoreContract('memory', async () => new MemoryRecordsStore());

/** A Redis records store over its own state store, cleared and closed after the test. */
function onRedis(url: string): [() => Promise<RedisRecordsStore>, () => Promise<void>] {
  let state: StateStore;
  return [
    async () => {
      state = new RedisStateStore({ url, prefix: uniquePrefix() });
      return new RedisRecordsStore({ state, buckets: hashBucketsFor(url) });
    },
    async () => {
      await state.clear();
      await state.close();
    },
  ];
}
recordsStoreContract('redis', ...onRedis(REDIS_URL));
recordsStoreContract('redis cluster', ...onRedis(REDIS_CLUSTER_URL));

let schema: string;
recordsStoreContract(
  'postgres',
  async () => PostgresRecordsStore.open({ url: POSTGRES_URL, schema: (schema = uniqueSchema('records')), poolSize: 4 }),
  () => dropSchema(schema),
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
});
