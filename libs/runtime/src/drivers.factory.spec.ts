import { loadConfig } from '@crawler/config';
import { Client } from 'pg';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatchingRecordsStore, FileRecordsStore, RecordsSettingError, RedisRecordsStore } from '@crawler/records';
import { createDatabase, dropDatabase } from '@crawler/records/testing';
import { MemoryStateStore } from '@crawler/state';
import { zstdBuiltIn } from '@crawler/content-store';
import { QueueName } from '@crawler/contracts';
import { Redis } from 'ioredis';
import { createBodyStaging, createQueueTransport, createRecordsStore } from './drivers.factory';
import { checkRecords } from './records-check';

describe('createBodyStaging', () => {
  // Words drawn from a few hundred, as text is: a higher level finds more to share.
  let seed = 1;
  const TEXT = Buffer.from(Array.from({ length: 5000 }, () => `w${(seed = (seed * 48271) % 2147483647) % 300}`).join(' '));
  const compressedBy = async (env: Record<string, string>) => {
    const staging = createBodyStaging(loadConfig({ ...env, CONTENT_GZIP_THREADS: '0' }), null as never, new MemoryStateStore());
    const staged = await staging.read(await staging.stage(TEXT));
    const { codec, bytes } = await staged!.compressed();
    await staging.close();
    return { codec, bytes };
  };

  it('compresses by CONTENT_CODEC at its level, auto meaning zstd where Node.js has it built in', async () => {
    expect((await compressedBy({})).codec).toBe(zstdBuiltIn() ? 'zstd' : 'gzip');
    const [fast, small] = await Promise.all([
      compressedBy({ CONTENT_CODEC: 'gzip', CONTENT_GZIP_LEVEL: '1' }),
      compressedBy({ CONTENT_CODEC: 'gzip', CONTENT_GZIP_LEVEL: '9' }),
    ]);
    expect(fast.codec).toBe('gzip');
    expect(fast.bytes.length).toBeGreaterThan(small.bytes.length);
    if (zstdBuiltIn()) {
      const zstd = await Promise.all([
        compressedBy({ CONTENT_CODEC: 'zstd', CONTENT_ZSTD_LEVEL: '1' }),
        compressedBy({ CONTENT_CODEC: 'zstd', CONTENT_ZSTD_LEVEL: '19' }),
      ]);
      expect(zstd.map((c) => c.codec)).toEqual(['zstd', 'zstd']);
      expect(zstd[0].bytes.length).toBeGreaterThan(zstd[1].bytes.length);
    }
  });
});

describe('createRecordsStore', () => {
  const state = new MemoryStateStore();

  it('keeps the records in files under the data dir when nothing is configured (not in memory: they grow with every page), in the Redis hashes with REDIS_URL', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'factory-'));
    try {
      const files = await createRecordsStore(loadConfig({ CRAWLER_DATA_DIR: dir }), state);
      expect(files).toBeInstanceOf(FileRecordsStore);
      await files.recordPages([{ url: 'http://a.test/', fetchedAt: '2026-01-01T00:00:00.000Z', status: 200, contentKey: 'k', contentHash: 'h' }]);
      await files.close();
      expect(existsSync(join(dir, 'records', 'pages.jsonl'))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(await createRecordsStore(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }), state)).toBeInstanceOf(RedisRecordsStore);
  });

  it('keeps them in PostgreSQL with RECORDS_URL, whatever REDIS_URL says, the calls of concurrent jobs batched', async () => {
    const { name, url } = await createDatabase('factory');
    const config = loadConfig({ RECORDS_URL: url, REDIS_URL: 'redis://127.0.0.1:6379', RECORDS_POOL_SIZE: '2' });
    try {
      const store = await createRecordsStore(config, state);
      expect(store).toBeInstanceOf(BatchingRecordsStore);
      await store.recordPages([{ url: 'http://a.test/', fetchedAt: '2026-01-01T00:00:00.000Z', status: 200, contentKey: 'k', contentHash: 'h' }]);
      await store.close();
      const client = new Client({ connectionString: url });
      await client.connect();
      // In the schema of the default CRAWLER_PREFIX.
      const { rows } = await client.query('SELECT url, content_key FROM crawler.pages');
      await client.end();
      expect(rows).toEqual([{ url: 'http://a.test/', content_key: 'k' }]);
    } finally {
      await dropDatabase(name);
    }
  });

  it('keeps the records of crawls with different CRAWLER_PREFIX values on one RECORDS_URL apart, each in the schema its prefix names', async () => {
    const { name, url } = await createDatabase('prefixes');
    const prefixes = ['crawl-one', 'Crawl-Two', 'crawler'];
    const stores = await Promise.all(prefixes.map((prefix) => createRecordsStore(loadConfig({ RECORDS_URL: url, CRAWLER_PREFIX: prefix }), state)));
    try {
      const fetched = (at: number) => ({
        url: 'http://a.test/',
        fetchedAt: `2026-01-0${at + 1}T00:00:00.000Z`,
        status: 200,
        contentKey: `k-${at}`,
        contentHash: `h-${at}`,
      });
      for (const [at, store] of stores.entries()) await store.recordPages([fetched(at)]);
      const pages = await Promise.all(stores.map(async (store) => (await store.lookup(['http://a.test/']))[0].page));
      expect(pages).toEqual(prefixes.map((_, at) => expect.objectContaining({ contentKey: `k-${at}`, changes: 0 })));
      const client = new Client({ connectionString: url });
      await client.connect();
      const { rows } = await client.query(`SELECT schemaname FROM pg_tables WHERE tablename = 'pages' ORDER BY 1`);
      await client.end();
      expect(rows.map((r) => r.schemaname)).toEqual([...prefixes].sort());
    } finally {
      await Promise.all(stores.map((store) => store.close()));
      await dropDatabase(name);
    }
  });
});

describe('checkRecords', () => {
  it('answers nothing without RECORDS_URL, and an error naming it when the database cannot be reached', async () => {
    expect(await checkRecords(loadConfig({}))).toBeNull();
    const refused = await checkRecords(loadConfig({ RECORDS_URL: 'postgres://postgres@127.0.0.1:1/none', RECORDS_STARTUP_WAIT_MS: '300' }));
    expect(refused).toBeInstanceOf(RecordsSettingError);
    expect(refused?.message).toMatch(/^RECORDS_URL postgres:\/\/postgres@127\.0\.0\.1:1\/none: cannot connect within 300 ms \(RECORDS_STARTUP_WAIT_MS\)/);
  });

  it('answers an error naming CRAWLER_PREFIX, before connecting, when the prefix cannot name a schema of its own', async () => {
    const check = (prefix: string) => checkRecords(loadConfig({ RECORDS_URL: 'postgres://postgres@127.0.0.1:1/none', CRAWLER_PREFIX: prefix }));
    expect((await check('public'))?.message).toMatch(/^CRAWLER_PREFIX "public" names the crawl's schema in RECORDS_URL's database, and is the default schema/);
    expect((await check('pg_crawl'))?.message).toMatch(/^CRAWLER_PREFIX "pg_crawl" .* PostgreSQL keeps for its own schemas/);
    expect((await check('c'.repeat(64)))?.message).toMatch(/^CRAWLER_PREFIX "c{64}" .* must be 1 to 63 letters, digits, _ or -/);
  });
});

describe('createQueueTransport', () => {
  const prefix = `test-factory-queue-${process.pid}-${Math.random().toString(36).slice(2)}`;

  const token = (i: number) => ({ v: 1 as const, urls: [{ url: `http://h${i}.test/`, depth: 0, source: 'seed' as const, hops: 0 }] });

  it('puts the messages sent together into envelopes of QUEUE_BATCH_MAX_MESSAGES, each waiting QUEUE_DISCOVERY_LINGER_MS for more', async () => {
    const transport = createQueueTransport(
      loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', CRAWLER_PREFIX: prefix, QUEUE_DISCOVERY_LINGER_MS: '300', QUEUE_BATCH_MAX_MESSAGES: '4' }),
    );
    const redis = new Redis('redis://127.0.0.1:6379');
    try {
      const started = Date.now();
      await Promise.all(Array.from({ length: 9 }, (_, i) => transport.add(QueueName.FrontierAdd, token(i))));
      // Two full envelopes leave at once; the ninth message waits out the linger for company.
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
      expect((await transport.counts(QueueName.FrontierAdd)).waiting).toBe(3);
      expect((await transport.messages(QueueName.FrontierAdd)).waiting).toBe(9);
    } finally {
      await transport.close();
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
      await redis.quit();
    }
  });

  it('waits QUEUE_DISCOVERY_LINGER_MS only on the hops no host waits on, QUEUE_BATCH_LINGER_MS on the others', async () => {
    const transport = createQueueTransport(
      loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', CRAWLER_PREFIX: `${prefix}-hops`, QUEUE_BATCH_LINGER_MS: '0', QUEUE_DISCOVERY_LINGER_MS: '300' }),
    );
    const redis = new Redis('redis://127.0.0.1:6379');
    const timed = async (send: () => Promise<void>) => {
      const started = Date.now();
      await send();
      return Date.now() - started;
    };
    try {
      expect(await timed(() => transport.add(QueueName.FrontierAdd, token(1)))).toBeGreaterThanOrEqual(290);
      const letter = { v: 1 as const, queue: QueueName.FrontierDone, reason: 'a test', payload: {}, at: new Date().toISOString() };
      expect(await timed(() => transport.add(QueueName.DeadLetter, letter))).toBeLessThan(290);
    } finally {
      await transport.close();
      const keys = await redis.keys(`${prefix}-hops:*`);
      if (keys.length) await redis.del(...keys);
      await redis.quit();
    }
  });
});
