import { Client } from 'pg';
import { BatchingRecordsStore } from './batching-records.driver';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileRecordsStore } from './file-records.driver';
import { PostgresRecordsStore } from './postgres-records.driver';
import { dropSchema, POSTGRES_URL, uniqueSchema } from './postgres-test-database';
import type { ContentClaim, FetchedPage } from './records-store';
import { recordsStoreContract } from './records-store.contract';

/** Every file store of this file, in a directory removed after it. */
const filesDir = mkdtempSync(join(tmpdir(), 'batching-records-'));
afterAll(() => rmSync(filesDir, { recursive: true, force: true }));
let stores = 0;
const fileStore = () => new FileRecordsStore(join(filesDir, String(++stores)));

recordsStoreContract('batching over files', async () => new BatchingRecordsStore(fileStore(), { lingerMs: 2, maxItems: 8 }));

let contractSchema: string;
recordsStoreContract(
  'batching over postgres',
  async (crawl) =>
    new BatchingRecordsStore(
      await PostgresRecordsStore.open({ url: POSTGRES_URL, schema: crawl ? `${contractSchema}-${crawl}` : (contractSchema = uniqueSchema('batching')), poolSize: 4 }),
      { lingerMs: 2, maxItems: 8 },
    ),
  async () => {
    await dropSchema(contractSchema);
    await dropSchema(`${contractSchema}-Other-Crawl`);
  },
);

const opened: CountingStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await FileRecordsStore.prototype.close.call(store);
});

/** The file store, with the batches it was handed counted (and a failure to inject on demand). */
class CountingStore extends FileRecordsStore {
  readonly batches: Record<string, number[]> = {};
  failNext: Error | null = null;

  private count(method: string, size: number): void {
    (this.batches[method] ??= []).push(size);
    const failure = this.failNext;
    this.failNext = null;
    if (failure) throw failure;
  }

  /** Closing the batching store closes this one: its files stay open until the test is done, so that it can still be read. */
  override async close(): Promise<void> {
    opened.push(this);
  }

  override async recordPages(pages: readonly FetchedPage[]): Promise<void> {
    this.count('recordPages', pages.length);
    return super.recordPages(pages);
  }

  override async claimContent(claims: readonly ContentClaim[]): Promise<string[]> {
    this.count('claimContent', claims.length);
    return super.claimContent(claims);
  }

  override async ownersOf(hashes: readonly string[]): Promise<(string | null)[]> {
    this.count('ownersOf', hashes.length);
    return super.ownersOf(hashes);
  }
}

const page = (i: number): FetchedPage => ({
  url: `http://p${i}.test/`,
  fetchedAt: '2026-01-01T00:00:00.000Z',
  status: 200,
  contentKey: `seg#${i}`,
  contentHash: `h${i}`,
});

describe('BatchingRecordsStore', () => {
  it('sends the calls of concurrent callers as one batch, and answers each its own results in its order', async () => {
    const inner = new CountingStore(join(filesDir, String(++stores)));
    const store = new BatchingRecordsStore(inner, { lingerMs: 20, maxItems: 1000 });
    const owners = await Promise.all([
      store.claimContent([{ contentHash: 'x', url: 'http://a.test/' }]),
      store.claimContent([
        { contentHash: 'y', url: 'http://b.test/' },
        { contentHash: 'x', url: 'http://b.test/' },
      ]),
      store.claimContent([]),
      store.claimContent([{ contentHash: 'y', url: 'http://c.test/' }]),
    ]);
    // The earlier call's claim wins, as if the calls had been made one after the other.
    expect(owners).toEqual([['http://a.test/'], ['http://b.test/', 'http://a.test/'], [], ['http://b.test/']]);
    expect(inner.batches.claimContent).toEqual([4]);
    expect(await Promise.all([store.ownersOf(['y', 'none']), store.ownersOf(['x'])])).toEqual([['http://b.test/', null], ['http://a.test/']]);
    expect(inner.batches.ownersOf).toEqual([3]);
    await store.close();
  });

  it('sends a batch as soon as it is full, without waiting out the linger', async () => {
    const inner = new CountingStore(join(filesDir, String(++stores)));
    const store = new BatchingRecordsStore(inner, { lingerMs: 60_000, maxItems: 3 });
    const started = Date.now();
    await Promise.all([0, 1, 2].map((i) => store.recordPages([page(i)])));
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(inner.batches.recordPages).toEqual([3]);
    // One call larger than a batch goes whole.
    await store.recordPages([page(3), page(4), page(5), page(6)]);
    expect(inner.batches.recordPages).toEqual([3, 4]);
    await store.close();
  });

  it('sends what lingers after the linger, and what is waiting when closed', async () => {
    const inner = new CountingStore(join(filesDir, String(++stores)));
    const store = new BatchingRecordsStore(inner, { lingerMs: 10, maxItems: 1000 });
    await Promise.all([store.recordPages([page(1)]), store.recordPages([page(2)])]);
    expect(inner.batches.recordPages).toEqual([2]);
    const late = new BatchingRecordsStore(inner, { lingerMs: 60_000, maxItems: 1000 });
    const waiting = late.recordPages([page(3)]);
    await late.close();
    await waiting;
    expect(inner.batches.recordPages).toEqual([2, 1]);
    expect((await inner.lookup(['http://p3.test/']))[0].page?.contentKey).toBe('seg#3');
  });

  it('with no linger, batches the calls of one turn of the event loop', async () => {
    const inner = new CountingStore(join(filesDir, String(++stores)));
    const store = new BatchingRecordsStore(inner, { lingerMs: 0, maxItems: 1000 });
    await Promise.all([1, 2, 3].map((i) => store.recordPages([page(i)])));
    expect(inner.batches.recordPages).toEqual([3]);
    await store.close();
  });

  it('rejects every caller of a batch that fails with its error, and sends the next batch afresh', async () => {
    const inner = new CountingStore(join(filesDir, String(++stores)));
    const store = new BatchingRecordsStore(inner, { lingerMs: 5, maxItems: 1000 });
    inner.failNext = new Error('connection terminated');
    const answers = await Promise.allSettled([1, 2, 3].map((i) => store.recordPages([page(i)])));
    expect(answers).toEqual([1, 2, 3].map(() => ({ status: 'rejected', reason: new Error('connection terminated') })));
    expect(await inner.lookup(['http://p1.test/'])).toEqual([{ page: null, duplicateOf: null }]);
    await Promise.all([1, 2, 3].map((i) => store.recordPages([page(i)])));
    expect(inner.batches.recordPages).toEqual([3, 3]);
    expect((await inner.lookup(['http://p2.test/']))[0].page?.contentKey).toBe('seg#2');
    await store.close();
  });
});

describe('BatchingRecordsStore, readiness', () => {
  it('answers a ping with the store under it, and has none where that store has none', async () => {
    expect(new BatchingRecordsStore(fileStore()).ping).toBeUndefined();
    const down = Object.assign(fileStore(), { ping: () => Promise.reject(new Error('PostgreSQL is down')) });
    await expect(new BatchingRecordsStore(down).ping?.()).rejects.toThrow('PostgreSQL is down');
  });
});

describe('BatchingRecordsStore over PostgreSQL', () => {
  let schema: string;
  let postgres: PostgresRecordsStore;
  let statements: jest.SpyInstance;

  beforeEach(async () => {
    postgres = await PostgresRecordsStore.open({ url: POSTGRES_URL, schema: (schema = uniqueSchema('batching_pg')), poolSize: 4 });
    // Every statement the store sends goes through a pooled client's query() (the pool's own query() is
    // wrapped by the store when it opens, before a spy on it could be set).
    statements = jest.spyOn(Client.prototype, 'query');
  });

  afterEach(async () => {
    statements.mockRestore();
    await postgres.close();
    await dropSchema(schema);
  });

  it('sends one statement per batch of concurrent callers, where each caller alone would send its own', async () => {
    const store = new BatchingRecordsStore(postgres, { lingerMs: 20, maxItems: 100 });
    const callers = Array.from({ length: 250 }, (_, i) => i);
    // Callers 2k and 2k+1 claim one hash (in one batch: batches in flight together have no order between them).
    const owners = await Promise.all(callers.map((i) => store.claimContent([{ contentHash: `h${i >> 1}`, url: `http://p${i}.test/` }])));
    expect(owners.map(([owner]) => owner)).toEqual(callers.map((i) => `http://p${i - (i % 2)}.test/`));
    expect(statements).toHaveBeenCalledTimes(3);
    statements.mockClear();
    await Promise.all(callers.map((i) => store.recordPages([page(i)])));
    expect(statements).toHaveBeenCalledTimes(3);
    statements.mockClear();
    const found = await Promise.all(callers.map((i) => store.lookup([`http://p${i}.test/`, 'http://none.test/'])));
    expect(found.map(([hit, miss]) => [hit.page?.contentKey, miss.page])).toEqual(callers.map((i) => [`seg#${i}`, null]));
    // A lookup reads pages and duplicates: two statements per batch of 100 URLs (each caller asks for 2).
    expect(statements).toHaveBeenCalledTimes(10);
    statements.mockClear();
    await Promise.all(callers.slice(0, 10).map((i) => postgres.recordPages([page(i)])));
    expect(statements).toHaveBeenCalledTimes(10);
  });

  it('rejects each caller of a failed statement; the batch wrote nothing, so their retries do', async () => {
    const store = new BatchingRecordsStore(postgres, { lingerMs: 10, maxItems: 100 });
    // Status 70000 does not fit its smallint column: the whole statement fails.
    const answers = await Promise.allSettled([store.recordPages([page(1)]), store.recordPages([{ ...page(2), status: 70_000 }])]);
    expect(answers.map((a) => a.status)).toEqual(['rejected', 'rejected']);
    expect(await store.lookup(['http://p1.test/'])).toEqual([{ page: null, duplicateOf: null }]);
    await store.recordPages([page(1)]);
    expect((await store.lookup(['http://p1.test/']))[0].page?.contentKey).toBe('seg#1');
  });
});
