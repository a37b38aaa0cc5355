import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Registry } from 'prom-client';
import { loadConfig } from '@crawler/config';
import { ParsedPage, SCHEMA_VERSION } from '@crawler/contracts';
import { FsContentStore } from '@crawler/content-store';
import { contentHash } from '@crawler/html';
import { CrawlStats } from '@crawler/runtime';
import { hammingDistance, simhash64 } from '@crawler/simhash';
import { MemoryStateStore } from '@crawler/state';
import { ContentSeenService, INLINE_METADATA_BYTES } from './content-seen.service';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function setup(nearDuplicateDistance = 3) {
  const dir = mkdtempSync(join(tmpdir(), 'content-seen-spec-'));
  dirs.push(dir);
  const state = new MemoryStateStore();
  const content = new FsContentStore(dir);
  const stats = new CrawlStats(state, new Registry());
  const config = loadConfig({}, { 'contentSeen.nearDuplicateDistance': nearDuplicateDistance });
  const replica = () => new ContentSeenService(state, content, new CrawlStats(state, new Registry()), config);
  return { service: new ContentSeenService(state, content, stats, config), replica, state, ns: state.namespace('content-seen'), content, stats };
}

const HASH = contentHash('Hello world');
const OTHER = contentHash('Something else');
const keyOf = (hash: string) => `pages/${hash.slice(0, 2)}/${hash}.html.gz`;

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
  return Array.from({ length: sentences }, () => Array.from({ length: 12 }, () => words[Math.floor(next() ** 2 * words.length)]).join(' ') + '.');
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

async function keys(content: FsContentStore, prefix = '') {
  const out: string[] = [];
  for await (const key of content.list(prefix)) out.push(key);
  return out.sort();
}

describe('ContentSeenService', () => {
  it('stores the first page with a hash under pages/, gzipped, with its metadata', async () => {
    const { service, content } = setup();
    const body = Buffer.from('<html><title>Hello</title><p>Hello world</p></html>');
    const verdict = await service.check(page('http://a.test/1'), body);
    const contentKey = keyOf(HASH);
    expect(verdict).toEqual({ kind: 'new', duplicate: false, contentKey });
    const stored = await content.get(contentKey);
    expect(gunzipSync(stored!.body)).toEqual(body);
    expect(stored!.meta).toEqual({
      url: 'http://a.test/1',
      fetchedAt: '2024-01-02T03:04:05.000Z',
      status: '200',
      contentType: 'text/html; charset=windows-1251',
      charset: 'windows-1251',
      contentHash: HASH,
      simhash: simhashOf(HASH),
      title: 'Hello',
      truncated: 'false',
      headers: JSON.stringify(page('http://a.test/1').headers),
    });
    expect(await keys(content)).toEqual([contentKey]); // no sidecar: the metadata fits the object
  });

  it('records the stored page in the urls hash of its namespace', async () => {
    const { service, ns } = setup();
    const { contentKey } = (await service.check(page('http://a.test/1'), Buffer.from('x'))) as { contentKey: string };
    const urls = await ns.hashGetAll('urls');
    expect(Object.keys(urls)).toEqual(['http://a.test/1']);
    expect(JSON.parse(urls['http://a.test/1'])).toEqual({
      fetchedAt: '2024-01-02T03:04:05.000Z',
      status: 200,
      contentKey,
      simhash: simhashOf(HASH),
      etag: '"abc"',
      lastModified: 'Mon, 01 Jan 2024 00:00:00 GMT',
    });
    expect(await ns.hashGet('original', HASH)).toBe('http://a.test/1');
  });

  it('takes a second URL with the same hash for a duplicate of the first, and stores nothing new', async () => {
    const { service, ns, content, stats } = setup();
    await service.check(page('http://a.test/1'), Buffer.from('first body'));
    const before = await keys(content);
    const verdict = await service.check(page('http://a.test/2'), Buffer.from('second   body, same text'));
    expect(verdict).toEqual({ kind: 'exact', duplicate: true, originalUrl: 'http://a.test/1', contentKey: keyOf(HASH) });
    expect(await keys(content)).toEqual(before);
    expect(gunzipSync((await content.get(before[0]))!.body).toString()).toBe('first body');
    expect(Object.keys(await ns.hashGetAll('urls'))).toEqual(['http://a.test/1']);
    expect(await ns.hashGetAll('duplicates')).toEqual({
      'http://a.test/2': JSON.stringify({ kind: 'exact', original: 'http://a.test/1', contentKey: keyOf(HASH) }),
    });
    expect(await stats.totals()).toEqual({ stored: 1, duplicate: 1 });
  });

  it('treats a redelivered page (same URL, same hash) as the original, not a duplicate', async () => {
    const { service, ns, content, stats } = setup();
    const first = await service.check(page('http://a.test/1'), Buffer.from('body'));
    const again = await service.check(page('http://a.test/1'), Buffer.from('body'));
    expect(again).toEqual(first);
    expect(again.duplicate).toBe(false);
    expect(await keys(content)).toEqual([(first as { contentKey: string }).contentKey]);
    expect(await ns.hashGetAll('duplicates')).toEqual({});
    expect(Object.keys(await ns.hashGetAll('urls'))).toEqual(['http://a.test/1']);
    expect((await stats.totals()).duplicate).toBeUndefined();
  });

  it('stores pages with different hashes separately', async () => {
    const { service, content } = setup();
    expect((await service.check(page('http://a.test/1'), Buffer.from('one'))).duplicate).toBe(false);
    expect((await service.check(page('http://a.test/2', OTHER), Buffer.from('two'))).duplicate).toBe(false);
    expect(await keys(content, 'pages/')).toEqual(
      [`pages/${HASH.slice(0, 2)}/${HASH}.html.gz`, `pages/${OTHER.slice(0, 2)}/${OTHER}.html.gz`].sort(),
    );
  });

  it('stores an untitled page with an empty title and leaves absent validators out', async () => {
    const { service, content, ns } = setup();
    const p = page('http://a.test/1', HASH, { title: undefined, headers: { 'content-type': 'text/html' }, truncated: true });
    const { contentKey } = (await service.check(p, Buffer.from('x'))) as { contentKey: string };
    expect((await content.get(contentKey))!.meta).toMatchObject({ title: '', truncated: 'true' });
    expect(JSON.parse((await ns.hashGet('urls', 'http://a.test/1'))!)).toEqual({ fetchedAt: p.fetchedAt, status: 200, contentKey, simhash: p.simhash });
  });

  it('shares what it has seen between instances through one state store', async () => {
    const { service, replica } = setup();
    await service.check(page('http://a.test/1'), Buffer.from('x'));
    expect(await replica().check(page('http://b.test/1'), Buffer.from('x'))).toMatchObject({ kind: 'exact', originalUrl: 'http://a.test/1' });
    expect(await replica().check(page('http://c.test/1', OTHER, { simhash: flip(simhashOf(HASH), 9) }), Buffer.from('y'))).toMatchObject({
      kind: 'near',
      originalUrl: 'http://a.test/1',
    });
  });

  describe('near duplicates', () => {
    it('records a page whose simhash is ≤ 3 bits from a stored one as its near duplicate: not stored, counted apart', async () => {
      const { service, ns, content, stats } = setup();
      const first = await service.check(page('http://a.test/1'), Buffer.from('first'));
      const before = await keys(content);
      const near = page('http://a.test/2', OTHER, { simhash: flip(simhashOf(HASH), 3, 40) });
      const verdict = await service.check(near, Buffer.from('second, nearly the same'));
      expect(verdict).toEqual({ kind: 'near', duplicate: true, originalUrl: 'http://a.test/1', contentKey: first.contentKey, distance: 2 });
      expect(await keys(content)).toEqual(before);
      expect(Object.keys(await ns.hashGetAll('urls'))).toEqual(['http://a.test/1']);
      expect(JSON.parse((await ns.hashGet('duplicates', 'http://a.test/2'))!)).toEqual({
        kind: 'near',
        original: 'http://a.test/1',
        contentKey: keyOf(HASH),
        distance: 2,
      });
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

      expect(await service.check(pageOf('http://a.test/article', text.join(' ')), Buffer.from('a'))).toMatchObject({ kind: 'new' });
      expect(await service.check(pageOf('http://b.test/copy', edited.join(' ')), Buffer.from('b'))).toMatchObject({
        kind: 'near',
        originalUrl: 'http://a.test/article',
      });
      expect(await service.check(pageOf('http://c.test/other', unrelated.join(' ')), Buffer.from('c'))).toMatchObject({ kind: 'new' });
      expect(await keys(content)).toHaveLength(2);
    });

    it('stores a page 4 bits away (beyond the default distance), and everything near when the distance is 0', async () => {
      const far = setup();
      await far.service.check(page('http://a.test/1'), Buffer.from('a'));
      const fourBits = page('http://a.test/2', OTHER, { simhash: flip(simhashOf(HASH), 0, 17, 34, 51) });
      expect(await far.service.check(fourBits, Buffer.from('b'))).toMatchObject({ kind: 'new' });

      const exactOnly = setup(0);
      await exactOnly.service.check(page('http://a.test/1'), Buffer.from('a'));
      expect(await exactOnly.service.check(page('http://a.test/2', OTHER, { simhash: simhashOf(HASH) }), Buffer.from('b'))).toMatchObject({
        kind: 'new',
      });
      expect(Object.keys(await exactOnly.state.hashGetAll('content-seen:simhash:4x16:o:' + simhashOf(HASH).slice(0, 4)))).toEqual([]);
    });

    it('takes an exact copy of a near duplicate for a near duplicate of the same original', async () => {
      const { service, ns, stats } = setup();
      await service.check(page('http://a.test/1'), Buffer.from('a'));
      await service.check(page('http://a.test/2', OTHER, { simhash: flip(simhashOf(HASH), 5) }), Buffer.from('b'));
      const copy = await service.check(page('http://a.test/3', OTHER, { simhash: flip(simhashOf(HASH), 5) }), Buffer.from('b'));
      expect(copy).toEqual({ kind: 'near', duplicate: true, originalUrl: 'http://a.test/1', contentKey: keyOf(HASH), distance: 1 });
      expect(JSON.parse((await ns.hashGet('duplicates', 'http://a.test/3'))!)).toMatchObject({ kind: 'near', original: 'http://a.test/1' });
      expect(await stats.totals()).toEqual({ stored: 1, 'duplicate.near': 2 });
    });

    it('treats a redelivered near duplicate the same way again', async () => {
      const { service } = setup();
      await service.check(page('http://a.test/1'), Buffer.from('a'));
      const near = page('http://a.test/2', OTHER, { simhash: flip(simhashOf(HASH), 60) });
      const first = await service.check(near, Buffer.from('b'));
      expect(await service.check(near, Buffer.from('b'))).toEqual(first);
      expect(first.kind).toBe('near');
    });

    it('stores a new version of a page near its earlier version (same URL, changed text): it duplicates nothing', async () => {
      const { service, content, ns } = setup();
      await service.check(page('http://a.test/1'), Buffer.from('version 1'));
      const v2 = page('http://a.test/1', OTHER, { simhash: flip(simhashOf(HASH), 7), fetchedAt: '2024-02-01T00:00:00.000Z' });
      expect(await service.check(v2, Buffer.from('version 2'))).toEqual({ kind: 'new', duplicate: false, contentKey: keyOf(OTHER) });
      expect(await keys(content)).toEqual([keyOf(HASH), keyOf(OTHER)].sort());
      expect(JSON.parse((await ns.hashGet('urls', 'http://a.test/1'))!)).toMatchObject({ contentKey: keyOf(OTHER), fetchedAt: v2.fetchedAt });
      // …and a third version with the very simhash of the first is still itself.
      const v3 = page('http://a.test/1', contentHash('v3'), { simhash: simhashOf(HASH) });
      expect(await service.check(v3, Buffer.from('version 3'))).toMatchObject({ kind: 'new' });
    });

    it('stores one of two pages with one simhash checked at once by two replicas; the other is its near duplicate', async () => {
      const { replica, content } = setup();
      const [a, b] = await Promise.all([
        replica().check(page('http://a.test/1', HASH), Buffer.from('a')),
        replica().check(page('http://b.test/1', OTHER, { simhash: simhashOf(HASH) }), Buffer.from('b')),
      ]);
      expect([a.kind, b.kind].sort()).toEqual(['near', 'new']);
      expect([a, b].find((v) => v.kind === 'near')).toMatchObject({ distance: 0 });
      expect(await keys(content)).toHaveLength(1);
    });
  });

  describe('metadata', () => {
    it('puts everything in a sidecar pages/xx/<hash>.meta.json when it would not fit S3 user metadata (2 KB)', async () => {
      const { service, content } = setup();
      const url = `http://a.test/${'long-path/'.repeat(150)}`;
      const headers = { 'content-type': 'text/html', 'set-cookie': 'x'.repeat(500), etag: '"e"' };
      const p = page(url, HASH, { headers, title: 'Заголовок страницы'.repeat(5) });
      const { contentKey } = await service.check(p, Buffer.from('body'));
      const sidecar = `pages/${HASH.slice(0, 2)}/${HASH}.meta.json`;
      expect(await keys(content)).toEqual([contentKey, sidecar].sort());
      expect((await content.get(contentKey))!.meta).toEqual({
        fetchedAt: p.fetchedAt,
        status: '200',
        contentType: p.contentType,
        charset: p.charset,
        contentHash: HASH,
        simhash: p.simhash,
        truncated: 'false',
        metadata: sidecar,
      });
      expect(JSON.parse((await content.get(sidecar))!.body.toString())).toEqual({
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
        contentKey,
      });
    });

    it('keeps the inline metadata under the budget with many headers', async () => {
      const { service, content } = setup();
      const headers = Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`x-header-${i}`, 'value ' + i]));
      const { contentKey } = await service.check(page('http://a.test/1', HASH, { headers }), Buffer.from('x'));
      const meta = (await content.get(contentKey))!.meta;
      const size = Object.entries(meta).reduce((n, [k, v]) => n + k.length + encodeURIComponent(v).length, 0);
      expect(size).toBeLessThanOrEqual(INLINE_METADATA_BYTES);
      expect(meta.metadata).toBeDefined();
    });
  });

  describe('regressions', () => {
    it('stores a page whose first attempt died after claiming its hash', async () => {
      const { service, ns } = setup();
      await ns.hashSetIfAbsent('original', HASH, 'http://a.test/1'); // what the interrupted first attempt left behind
      expect(await service.check(page('http://a.test/1'), Buffer.from('x'))).toMatchObject({ duplicate: false });
    });
  });
});
