import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Registry } from 'prom-client';
import { ParsedPage, SCHEMA_VERSION } from '@crawler/contracts';
import { FsContentStore } from '@crawler/content-store';
import { contentHash } from '@crawler/html';
import { CrawlStats } from '@crawler/runtime';
import { MemoryStateStore } from '@crawler/state';
import { ContentSeenService } from './content-seen.service';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'content-seen-spec-'));
  dirs.push(dir);
  const state = new MemoryStateStore();
  const content = new FsContentStore(dir);
  const stats = new CrawlStats(state, new Registry());
  return { service: new ContentSeenService(state, content, stats), state, ns: state.namespace('content-seen'), content, stats };
}

const HASH = contentHash('Hello world');
const OTHER = contentHash('Something else');

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
    const contentKey = `pages/${HASH.slice(0, 2)}/${HASH}.html.gz`;
    expect(verdict).toEqual({ duplicate: false, contentKey });
    const stored = await content.get(contentKey);
    expect(gunzipSync(stored!.body)).toEqual(body);
    expect(stored!.meta).toEqual({
      url: 'http://a.test/1',
      fetchedAt: '2024-01-02T03:04:05.000Z',
      status: '200',
      contentType: 'text/html; charset=windows-1251',
      charset: 'windows-1251',
      contentHash: HASH,
      title: 'Hello',
      truncated: 'false',
    });
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
    expect(verdict).toEqual({ duplicate: true, originalUrl: 'http://a.test/1' });
    expect(await keys(content)).toEqual(before);
    expect(gunzipSync((await content.get(before[0]))!.body).toString()).toBe('first body');
    expect(Object.keys(await ns.hashGetAll('urls'))).toEqual(['http://a.test/1']);
    expect(await ns.hashGetAll('duplicates')).toEqual({ 'http://a.test/2': 'http://a.test/1' });
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
    expect(JSON.parse((await ns.hashGet('urls', 'http://a.test/1'))!)).toEqual({ fetchedAt: p.fetchedAt, status: 200, contentKey });
  });

  it('shares what it has seen between instances through one state store', async () => {
    const { service, state, content } = setup();
    const replica = new ContentSeenService(state, content, new CrawlStats(state, new Registry()));
    await service.check(page('http://a.test/1'), Buffer.from('x'));
    expect(await replica.check(page('http://b.test/1'), Buffer.from('x'))).toEqual({ duplicate: true, originalUrl: 'http://a.test/1' });
  });

  describe('regressions', () => {
    it('stores a page whose first attempt died after claiming its hash', async () => {
      const { service, ns } = setup();
      await ns.hashSetIfAbsent('original', HASH, 'http://a.test/1'); // what the interrupted first attempt left behind
      expect(await service.check(page('http://a.test/1'), Buffer.from('x'))).toMatchObject({ duplicate: false });
    });
  });
});
