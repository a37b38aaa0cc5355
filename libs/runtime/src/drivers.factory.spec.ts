import { loadConfig } from '@crawler/config';
import { Client } from 'pg';
import { BatchingRecordsStore, MemoryRecordsStore, RecordsSettingError, RedisRecordsStore } from '@crawler/records';
import { createDatabase, dropDatabase } from '@crawler/records/testing';
import { MemoryStateStore } from '@crawler/state';
import { createRecordsStore } from './drivers.factory';
import { checkRecords } from './records-check';

describe('createRecordsStore', () => {
  const state = new MemoryStateStore();

  it('keeps the records in memory when nothing is configured, in the Redis hashes with REDIS_URL', async () => {
    expect(await createRecordsStore(loadConfig({}), state)).toBeInstanceOf(MemoryRecordsStore);
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
      const { rows } = await client.query('SELECT url, content_key FROM pages');
      await client.end();
      expect(rows).toEqual([{ url: 'http://a.test/', content_key: 'k' }]);
    } finally {
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
});
