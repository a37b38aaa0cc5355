import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { Registry } from 'prom-client';
import { loadConfig } from '@crawler/config';
import { ParsedPage, SCHEMA_VERSION } from '@crawler/contracts';
import { FsContentStore, SegmentedPageStore, StagedBody } from '@crawler/content-store';
import { contentHash } from '@crawler/html';
import { CrawlStats } from '@crawler/runtime';
import { hammingDistance, simhash64 } from '@crawler/simhash';
import { Client } from 'pg';
import { BatchingRecordsStore, PostgresRecordsStore, RecordsStore, RedisRecordsStore } from '@crawler/records';
import { dropSchema, POSTGRES_URL, uniqueSchema } from '@crawler/records/testing';
import { hashBucketsFor, MemoryStateStore, PartitionedHash, RedisStateStore, StateStore } from '@crawler/state';
import { ContentSeenService } from './content-seen.service';

/** The records in the state store's hashes (the Redis driver, here also on a memory state store), as a crawl on Redis keeps them. */
const recordsIn = (state: StateStore, redisUrl?: string) => new RedisRecordsStore({ state, buckets: hashBucketsFor(redisUrl) });

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function setup(nearDuplicateDistance = 3) {
  const dir = mkdtempSync(join(tmpdir(), 'content-seen-spec-'));
  dirs.push(dir);
  const state = new MemoryStateStore();
  const content = new FsContentStore(dir);
  // A segment per page: each check's storage is on disk when it returns.
  const pages = new SegmentedPageStore(content, { maxPages: 1 });
  const stats = new CrawlStats(state, new Registry(), loadConfig({}));
  const config = loadConfig({}, { 'contentSeen.nearDuplicateDistance': nearDuplicateDistance });
  const replica = () => new ContentSeenService(recordsIn(state), pages, new CrawlStats(state, new Registry(), loadConfig({})), config);
  return { service: new ContentSeenService(recordsIn(state), pages, stats, config), replica, state, ns: state.namespace('content-seen'), content, pages, stats };
}

/** A body as the processor hands it over from staging. */
const staged = (body: Buffer): StagedBody => ({ body, compressed: async () => ({ codec: 'gzip', bytes: gzipSync(body) }) });

const HASH = contentHash('Hello world');
const OTHER = contentHash('Something else');

/** A simhash for a test content: the first 16 hex of its hash, so unrelated contents are ≈ 32 bits apart. */
const simhashOf = (hash: string) => hash.slice(0, 16);

/** `simhash` with the given bits (0 = most significant) flipped. */
function flip(simhash: string, ...bits: number[]): string {
  let value = BigInt(`0x${simhash}`);
  for (const bit of bits) value ^= 1n << BigInt(63 - bit);
  return value.toString(16).padStart(16, '0');
}

/** `sentences` 12-word sentences of pseudo-text (deterministic). */
function article(seed: number, sentences: number): string[] {
  let s = seed;
  const next = () => ((s ^= s << 13), (s ^= s >>> 17), (s ^= s << 5), (s >>> 0) / 2 ** 32);
  const words = Array.from({ length: 2000 }, (_, i) => `w${i.toString(36)}${'aeiou'[i % 5]}`);
  return Array.from({ length: sentences }, () => `${Array.from({ length: 12 }, () => words[Math.floor(next() ** 2 * words.length)]).join(' ')}.`);
}

/** A page for a text: its hash and simhash as the parser computes them. */
function pageOf(url: string, text: string, extra: Partial<ParsedPage> = {}): ParsedPage {
  return page(url, contentHash(text), { simhash: simhash64(text), ...extra });
}

function page(url: string, hash = HASH, extra: Partial<ParsedPage> = {}): ParsedPage {
  return {
    v: SCHEMA_VERSION,
    fetchId: 'f1',
    url,
    depth: 1,
    status: 200,
    headers: { 'content-type': 'text/html; charset=windows-1251', etag: '"abc"', 'last-modified': 'Mon, 01 Jan 2024 00:00:00 GMT' },
    contentType: 'text/html; charset=windows-1251',
    bodyKey: 'staging/f1-x',
    length: 10,
    truncated: false,
    fetchedAt: '2024-01-02T03:04:05.000Z',
    charset: 'windows-1251',
    charsetSource: 'http',
    title: 'Hello',
    noindex: false,
    nofollow: false,
    contentHash: hash,
    simhash: simhashOf(hash),
    links: [],
    ...extra,
  };
}

/** The page segments written (each page its own here: see setup). */
async function segments(content: FsContentStore) {
  const out: string[] = [];
  for await (const key of content.list('pages/')) if (key.endsWith('.gz')) out.push(key);
  return out.sort();
}

describe('ContentSeenService', () => {
  it('stores the first page with a hash in the page store, gzipped, with its metadata', async () => {
    const { service, pages, content } = setup();
    const body = Buffer.from('<html><title>Hello</title><p>Hello world</p></html>');
    const verdict = await service.check(page('http://a.test/1'), staged(body));
    expect(verdict).toEqual({ kind: 'new', duplicate: false, contentKey: expect.stringMatching(/^pages\/.*\.gz#0\.\d+$/) });
    const stored = await pages.read((verdict as { contentKey: string }).contentKey, { meta: true });
    expect(stored?.body).toEqual(body);
    expect(stored?.meta).toEqual({
      url: 'http://a.test/1',
      fetchedAt: '2024-01-02T03:04:05.000Z',
      status: 200,
      contentType: 'text/html; charset=windows-1251',
      charset: 'windows-1251',
      contentHash: HASH,
      simhash: simhashOf(HASH),
      title: 'Hello',
      truncated: false,
      headers: page('http://a.test/1').headers,
    });
    expect(await segments(content)).toHaveLength(1);
  });

  it('records the stored page in the urls hash of its namespace', async () => {
    const { service, ns } = setup();
    const { contentKey } = (await service.check(page('http://a.test/1'), staged(Buffer.from('x')))) as { contentKey: string };
    const urls = await ns.hashGetAll('urls');
    expect(Object.keys(urls)).toEqual(['http://a.test/1']);
    expect(JSON.parse(urls['http://a.test/1'])).toEqual({
      fetchedAt: '2024-01-02T03:04:05.000Z',
      status: 200,
      contentKey,
      simhash: simhashOf(HASH),
      etag: '"abc"',
      lastModified: 'Mon, 01 Jan 2024 00:00:00 GMT',
      contentHash: HASH,
      changes: 0,
      changedAt: '2024-01-02T03:04:05.000Z',
    });
    expect(await ns.hashGet('original', HASH)).toBe('http://a.test/1');
  });

  it('takes a second URL with the same hash for a duplicate of the first, and stores nothing new', async () => {
    const { service, ns, content, stats } = setup();
    await service.check(page('http://a.test/1'), staged(Buffer.from('first body')));
    const before = await segments(content);
    const verdict = await service.check(page('http://a.test/2'), staged(Buffer.from('second   body, same text')));
    expect(verdict).toEqual({ kind: 'exact', duplicate: true, originalUrl: 'http://a.test/1' });
    expect(await segments(content)).toEqual(before);
    expect(gunzipSync((await content.get(before[0]))!.body).toString()).toBe('first body');
    expect(Object.keys(await ns.hashGetAll('urls'))).toEqual(['http://a.test/1']);
    expect(await ns.hashGetAll('duplicates')).toEqual({
      'http://a.test/2': JSON.stringify({ kind: 'exact', original: 'http://a.test/1' }),
    });
    expect(await stats.totals()).toEqual({ stored: 1, duplicate: 1 });
  });

  it('treats a redelivered page (same URL, same hash) as the original, not a duplicate: it is stored again', async () => {
    const { service, ns, pages, stats } = setup();
    await service.check(page('http://a.test/1'), staged(Buffer.from('body')));
    const again = await service.check(page('http://a.test/1'), staged(Buffer.from('body')));
    expect(again).toMatchObject({ kind: 'new', duplicate: false });
    expect((await pages.read((again as { contentKey: string }).contentKey))?.body.toString()).toBe('body');
    expect(await ns.hashGetAll('duplicates')).toEqual({});
    expect(Object.keys(await ns.hashGetAll('urls'))).toEqual(['http://a.test/1']);
    expect((await stats.totals()).duplicate).toBeUndefined();
  });

  it('stores pages with different hashes separately', async () => {
    const { service, content } = setup();
    expect((await service.check(page('http://a.test/1'), staged(Buffer.from('one')))).duplicate).toBe(false);
    expect((await service.check(page('http://a.test/2', OTHER), staged(Buffer.from('two')))).duplicate).toBe(false);
    expect(await segments(content)).toHaveLength(2);
  });

  it('stores an untitled page with an empty title and leaves absent validators out', async () => {
    const { service, pages, ns } = setup();
    const p = page('http://a.test/1', HASH, { title: undefined, headers: { 'content-type': 'text/html' }, truncated: true });
    const { contentKey } = (await service.check(p, staged(Buffer.from('x')))) as { contentKey: string };
    expect((await pages.read(contentKey, { meta: true }))!.meta).toMatchObject({ title: '', truncated: true });
    expect(JSON.parse((await ns.hashGet('urls', 'http://a.test/1'))!)).toEqual({
      fetchedAt: p.fetchedAt,
      status: 200,
      contentKey,
      contentHash: HASH,
      simhash: p.simhash,
      changes: 0,
      changedAt: p.fetchedAt,
    });
  });

  it('shares what it has seen between instances through one state store', async () => {
    const { service, replica } = setup();
    await service.check(page('http://a.test/1'), staged(Buffer.from('x')));
    expect(await replica().check(page('http://b.test/1'), staged(Buffer.from('x')))).toMatchObject({ kind: 'exact', originalUrl: 'http://a.test/1' });
    expect(await replica().check(page('http://c.test/1', OTHER, { simhash: flip(simhashOf(HASH), 9) }), staged(Buffer.from('y')))).toMatchObject({
      kind: 'near',
      originalUrl: 'http://a.test/1',
    });
  });

  describe('near duplicates', () => {
    it('records a page whose simhash is ≤ 3 bits from a stored one as its near duplicate: not stored, counted apart', async () => {
      const { service, ns, content, stats } = setup();
      await service.check(page('http://a.test/1'), staged(Buffer.from('first')));
      const before = await segments(content);
      const near = page('http://a.test/2', OTHER, { simhash: flip(simhashOf(HASH), 3, 40) });
      const verdict = await service.check(near, staged(Buffer.from('second, nearly the same')));
      expect(verdict).toEqual({ kind: 'near', duplicate: true, originalUrl: 'http://a.test/1', distance: 2 });
      expect(await segments(content)).toEqual(before);
      expect(Object.keys(await ns.hashGetAll('urls'))).toEqual(['http://a.test/1']);
      expect(JSON.parse((await ns.hashGet('duplicates', 'http://a.test/2'))!)).toEqual({ kind: 'near', original: 'http://a.test/1', distance: 2 });
      expect(await stats.totals()).toEqual({ stored: 1, 'duplicate.near': 1 });
    });

    it('catches a long page with one changed sentence, and stores an unrelated page', async () => {
      const { service, content } = setup();
      const text = article(1, 400); // 4,800 words
      const edited = [...text];
      edited[170] = article(3, 1)[0];
      const unrelated = article(2, 400);
      // Preconditions, computed as the parser does. In a ~500-word page one changed sentence is usually 4–6
      // bits away, beyond distance 3: libs/simhash's spec measures how often such edits stay ≤ 3.
      expect(hammingDistance(simhash64(text.join(' ')), simhash64(edited.join(' ')))).toBeLessThanOrEqual(3);
      expect(hammingDistance(simhash64(text.join(' ')), simhash64(unrelated.join(' ')))).toBeGreaterThan(10);

      expect(await service.check(pageOf('http://a.test/article', text.join(' ')), staged(Buffer.from('a')))).toMatchObject({ kind: 'new' });
      expect(await service.check(pageOf('http://b.test/copy', edited.join(' ')), staged(Buffer.from('b')))).toMatchObject({
        kind: 'near',
        originalUrl: 'http://a.test/article',
      });
      expect(await service.check(pageOf('http://c.test/other', unrelated.join(' ')), staged(Buffer.from('c')))).toMatchObject({ kind: 'new' });
      expect(await segments(content)).toHaveLength(2);
    });

    it('stores a page 4 bits away (beyond the default distance), and everything near when the distance is 0', async () => {
      const far = setup();
      await far.service.check(page('http://a.test/1'), staged(Buffer.from('a')));
      const fourBits = page('http://a.test/2', OTHER, { simhash: flip(simhashOf(HASH), 0, 17, 34, 51) });
      expect(await far.service.check(fourBits, staged(Buffer.from('b')))).toMatchObject({ kind: 'new' });

      const exactOnly = setup(0);
      await exactOnly.service.check(page('http://a.test/1'), staged(Buffer.from('a')));
      expect(await exactOnly.service.check(page('http://a.test/2', OTHER, { simhash: simhashOf(HASH) }), staged(Buffer.from('b')))).toMatchObject({
        kind: 'new',
      });
      expect(Object.keys(await exactOnly.state.hashGetAll(`content-seen:simhash:4x16:o:${simhashOf(HASH).slice(0, 4)}`))).toEqual([]);
    });

    it('takes an exact copy of a near duplicate for a near duplicate of the same original', async () => {
      const { service, ns, stats } = setup();
      await service.check(page('http://a.test/1'), staged(Buffer.from('a')));
      await service.check(page('http://a.test/2', OTHER, { simhash: flip(simhashOf(HASH), 5) }), staged(Buffer.from('b')));
      const copy = await service.check(page('http://a.test/3', OTHER, { simhash: flip(simhashOf(HASH), 5) }), staged(Buffer.from('b')));
      expect(copy).toEqual({ kind: 'near', duplicate: true, originalUrl: 'http://a.test/1', distance: 1 });
      expect(JSON.parse((await ns.hashGet('duplicates', 'http://a.test/3'))!)).toMatchObject({ kind: 'near', original: 'http://a.test/1' });
      expect(await stats.totals()).toEqual({ stored: 1, 'duplicate.near': 2 });
    });

    it('treats a redelivered near duplicate the same way again', async () => {
      const { service } = setup();
      await service.check(page('http://a.test/1'), staged(Buffer.from('a')));
      const near = page('http://a.test/2', OTHER, { simhash: flip(simhashOf(HASH), 60) });
      const first = await service.check(near, staged(Buffer.from('b')));
      expect(await service.check(near, staged(Buffer.from('b')))).toEqual(first);
      expect(first.kind).toBe('near');
    });

    it('stores a new version of a page near its earlier version (same URL, changed text): it duplicates nothing', async () => {
      const { service, content, ns } = setup();
      await service.check(page('http://a.test/1'), staged(Buffer.from('version 1')));
      const v2 = page('http://a.test/1', OTHER, { simhash: flip(simhashOf(HASH), 7), fetchedAt: '2024-02-01T00:00:00.000Z' });
      const second = await service.check(v2, staged(Buffer.from('version 2')));
      expect(second).toMatchObject({ kind: 'new', duplicate: false });
      expect(await segments(content)).toHaveLength(2);
      expect(JSON.parse((await ns.hashGet('urls', 'http://a.test/1'))!)).toMatchObject({
        contentKey: (second as { contentKey: string }).contentKey,
        fetchedAt: v2.fetchedAt,
      });
      // …and a third version with the very simhash of the first is still itself.
      const v3 = page('http://a.test/1', contentHash('v3'), { simhash: simhashOf(HASH) });
      expect(await service.check(v3, staged(Buffer.from('version 3')))).toMatchObject({ kind: 'new' });
    });

    it('stores one of two pages with one simhash checked at once by two replicas; the other is its near duplicate', async () => {
      const { replica, content } = setup();
      const [a, b] = await Promise.all([
        replica().check(page('http://a.test/1', HASH), staged(Buffer.from('a'))),
        replica().check(page('http://b.test/1', OTHER, { simhash: simhashOf(HASH) }), staged(Buffer.from('b'))),
      ]);
      expect([a.kind, b.kind].sort()).toEqual(['near', 'new']);
      expect([a, b].find((v) => v.kind === 'near')).toMatchObject({ distance: 0 });
      expect(await segments(content)).toHaveLength(1);
    });
  });

  describe('metadata', () => {
    it('keeps all of it, however large (a long URL, a long title, many headers), in the segment index', async () => {
      const { service, pages } = setup();
      const url = `http://a.test/${'long-path/'.repeat(150)}`;
      const headers = {
        'content-type': 'text/html',
        'set-cookie': 'x'.repeat(500),
        etag: '"e"',
        ...Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`x-header-${i}`, `value ${i}`])),
      };
      const p = page(url, HASH, { headers, title: 'Заголовок страницы'.repeat(5) });
      const { contentKey } = (await service.check(p, staged(Buffer.from('body')))) as { contentKey: string };
      expect((await pages.read(contentKey, { meta: true }))!.meta).toEqual({
        url,
        fetchedAt: p.fetchedAt,
        status: 200,
        contentType: p.contentType,
        charset: p.charset,
        title: p.title,
        truncated: false,
        headers,
        contentHash: HASH,
        simhash: p.simhash,
      });
    });
  });

  describe('regressions', () => {
    it('stores a page whose first attempt died after claiming its hash', async () => {
      const { service, ns } = setup();
      await ns.hashSetIfAbsent('original', HASH, 'http://a.test/1'); // what the interrupted first attempt left behind
      expect(await service.check(page('http://a.test/1'), staged(Buffer.from('x')))).toMatchObject({ duplicate: false });
    });
  });
});

describe('ContentSeenService on a Redis Cluster', () => {
  const REDIS_CLUSTER_URL = process.env.REDIS_CLUSTER_URL || 'redis+cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002';
  let state: RedisStateStore;

  beforeEach(() => {
    state = new RedisStateStore({ url: REDIS_CLUSTER_URL, prefix: `t17h-content-seen-${process.pid}-${Math.random().toString(36).slice(2)}` });
  });

  afterEach(async () => {
    await state.clear();
    await state.close();
  });

  /** As setup(), on the cluster, with the config that names it (so the records are partitioned). */
  function clusterSetup() {
    const dir = mkdtempSync(join(tmpdir(), 'content-seen-spec-'));
    dirs.push(dir);
    const pages = new SegmentedPageStore(new FsContentStore(dir), { maxPages: 1 });
    const config = loadConfig({ REDIS_URL: REDIS_CLUSTER_URL }, { 'contentSeen.nearDuplicateDistance': 3 });
    const replica = () => new ContentSeenService(recordsIn(state, REDIS_CLUSTER_URL), pages, new CrawlStats(state, new Registry(), config), config);
    const ns = state.namespace('content-seen');
    const hash = (name: string) => new PartitionedHash(ns, name, hashBucketsFor(REDIS_CLUSTER_URL));
    return { replica, ns, urls: hash('urls'), original: hash('original'), duplicates: hash('duplicates') };
  }

  it('records stored pages in the urls buckets, spread over many keys, none in the one-key layout', async () => {
    const { replica, ns, urls, original } = clusterSetup();
    const service = replica();
    const texts = Array.from({ length: 12 }, (_, i) => `page number ${i}`);
    for (const [i, text] of texts.entries()) await service.check(pageOf(`http://a.test/${i}`, text), staged(Buffer.from(text)));
    expect(Object.keys(await urls.getAll()).sort()).toEqual(texts.map((_, i) => `http://a.test/${i}`).sort());
    expect(new Set(texts.map((_, i) => urls.keyOf(`http://a.test/${i}`))).size).toBeGreaterThan(8);
    expect(await original.get(contentHash(texts[3]))).toBe('http://a.test/3');
    expect(await ns.hashGetAll('urls')).toEqual({});
  });

  it('finds exact and near duplicates between replicas, and records them in the duplicates buckets', async () => {
    const { replica, duplicates } = clusterSetup();
    await replica().check(page('http://a.test/1'), staged(Buffer.from('x')));
    expect(await replica().check(page('http://b.test/1'), staged(Buffer.from('x')))).toMatchObject({ kind: 'exact', originalUrl: 'http://a.test/1' });
    expect(await replica().check(page('http://c.test/1', OTHER, { simhash: flip(simhashOf(HASH), 9) }), staged(Buffer.from('y')))).toMatchObject({
      kind: 'near',
      originalUrl: 'http://a.test/1',
    });
    expect(await duplicates.getAll()).toEqual({
      'http://b.test/1': JSON.stringify({ kind: 'exact', original: 'http://a.test/1' }),
      'http://c.test/1': JSON.stringify({ kind: 'near', original: 'http://a.test/1', distance: 1 }),
    });
    expect(await replica().check(page('http://a.test/1'), staged(Buffer.from('x')))).toMatchObject({ kind: 'new' });
  });
});

describe('ContentSeenService with its records in PostgreSQL', () => {
  let schema: string;
  let records: PostgresRecordsStore;
  let state: MemoryStateStore;

  beforeEach(async () => {
    state = new MemoryStateStore();
    records = await PostgresRecordsStore.open({ url: POSTGRES_URL, schema: (schema = uniqueSchema('content_seen')), poolSize: 4 });
  });

  afterEach(async () => {
    await records.close();
    await dropSchema(schema);
  });

  function replica(store: RecordsStore = records) {
    const dir = mkdtempSync(join(tmpdir(), 'content-seen-spec-'));
    dirs.push(dir);
    const pages = new SegmentedPageStore(new FsContentStore(dir), { maxPages: 1 });
    const config = loadConfig({}, { 'contentSeen.nearDuplicateDistance': 3 });
    return new ContentSeenService(store, pages, new CrawlStats(state, new Registry(), loadConfig({})), config);
  }

  it('coalesces the records of concurrent jobs into a statement per batch, each job answered its own verdict', async () => {
    const service = replica(new BatchingRecordsStore(records, { lingerMs: 50, maxItems: 1000 }));
    // 40 contents, each fetched under two URLs: 80 jobs at once, as a content-seen replica runs them.
    const jobs = Array.from({ length: 80 }, (_, i) => page(`http://site-${i % 40}.test/${i < 40 ? 'a' : 'b'}`, contentHash(`text ${i % 40}`)));
    // Counted at the pooled clients: the store wraps its pool's own query() when it opens.
    const statements = jest.spyOn(Client.prototype, 'query');
    try {
      const verdicts = await Promise.all(jobs.map((job) => service.check(job, staged(Buffer.from(job.url)))));
      expect(verdicts.map((v) => v.kind)).toEqual(jobs.map((_, i) => (i < 40 ? 'new' : 'exact')));
      expect(verdicts.slice(40).map((v) => (v as { originalUrl: string }).originalUrl)).toEqual(jobs.slice(0, 40).map((j) => j.url));
      // One job at a time: 80 claims, 40 lookups (2 statements each), 40 duplicates, 40 pages (240 statements);
      // in batches: a claim, a lookup, a duplicates and a few page batches (stores finish at their own pace).
      expect(statements.mock.calls.length).toBeLessThanOrEqual(10);
    } finally {
      statements.mockRestore();
    }
    const found = await records.lookup(jobs.map((j) => j.url));
    expect(found.map((r) => (r.page ? 'page' : r.duplicateOf?.kind))).toEqual(jobs.map((_, i) => (i < 40 ? 'page' : 'exact')));
  });

  it('stores the first page of a content, finds exact and near duplicates between replicas, and records them all', async () => {
    const first = await replica().check(page('http://a.test/1'), staged(Buffer.from('x')));
    expect(first).toMatchObject({ kind: 'new' });
    expect(await replica().check(page('http://b.test/1'), staged(Buffer.from('x')))).toMatchObject({ kind: 'exact', originalUrl: 'http://a.test/1' });
    expect(await replica().check(page('http://c.test/1', OTHER, { simhash: flip(simhashOf(HASH), 9) }), staged(Buffer.from('y')))).toMatchObject({
      kind: 'near',
      originalUrl: 'http://a.test/1',
    });
    // A copy of a near duplicate is as near to the same original.
    expect(await replica().check(page('http://d.test/1', OTHER), staged(Buffer.from('y')))).toMatchObject({ kind: 'near', originalUrl: 'http://a.test/1', distance: 1 });
    const found = await records.lookup(['http://a.test/1', 'http://b.test/1', 'http://c.test/1', 'http://d.test/1']);
    expect(found[0].page).toMatchObject({ contentKey: (first as { contentKey: string }).contentKey, contentHash: HASH, etag: '"abc"', changes: 0 });
    expect(found.slice(1).map((r) => r.duplicateOf)).toEqual([
      { kind: 'exact', original: 'http://a.test/1' },
      { kind: 'near', original: 'http://a.test/1', distance: 1 },
      { kind: 'near', original: 'http://a.test/1', distance: 1 },
    ]);
    expect(await replica().check(page('http://a.test/1'), staged(Buffer.from('x')))).toMatchObject({ kind: 'new' });
  });
});
