import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type Codec, compressSync, decompressSync } from './codec';
import { CODECS, describeCodec } from './codec-test';
import { collectKeys } from './content-store.contract';
import type { ContentStore } from './content-store';
import { FsContentStore } from './fs-content-store.driver';
import { MinioContentStore } from './minio-content-store.driver';
import { indexKeyOf, parsePageRef, SegmentedPageStore, StoredPageMeta } from './page-store';
import { S3TestServer, startS3TestServer } from './s3-test-server';

const meta = (url: string): StoredPageMeta => ({
  url,
  fetchedAt: '2026-11-25T00:00:00.000Z',
  status: 200,
  contentType: 'text/html; charset=utf-8',
  charset: 'utf-8',
  title: `title of ${url}`,
  truncated: false,
  headers: { 'content-type': 'text/html; charset=utf-8', etag: '"e"' },
  contentHash: 'a'.repeat(64),
  simhash: '0123456789abcdef',
});

const compressed = (codec: Codec, body: string | Buffer) => ({ codec, bytes: compressSync(Buffer.from(body), { codec, level: 3 }) });

function pageStoreContract(name: string, codec: Codec, make: () => Promise<{ content: ContentStore; cleanup: () => Promise<void> }>) {
  describeCodec(codec, `SegmentedPageStore on ${name}, ${codec}`, () => {
    let content: ContentStore;
    let cleanup: () => Promise<void>;
    beforeEach(async () => ({ content, cleanup } = await make()));
    afterEach(() => cleanup());

    it('stores pages stored together in one segment and its index, each page readable by its reference', async () => {
      const pages = new SegmentedPageStore(content, { lingerMs: 5000, maxPages: 20 });
      const bodies = Array.from({ length: 20 }, (_, i) => Buffer.from(`<html>page ${i} ${'x'.repeat(i * 50)}</html>`));
      const refs = await Promise.all(bodies.map((b, i) => pages.store(compressed(codec, b), meta(`http://a.test/${i}`))));
      const keys = await collectKeys(content.list('pages/'));
      expect(keys).toHaveLength(2);
      const segment = parsePageRef(refs[0]).key;
      expect(segment).toMatch(codec === 'gzip' ? /^pages\/[\d-]+\/[^/]+\.gz$/ : /^pages\/[\d-]+\/[^/]+\.zst$/);
      expect(keys).toEqual([indexKeyOf(segment), segment].sort());
      // The segment is one file of its codec (what zcat or zstdcat reads whole): the pages, one after the other.
      const stored = (await content.get(segment))!;
      expect(stored.meta).toEqual({ pages: '20', codec });
      expect(decompressSync(stored.body, codec).toString()).toBe(Buffer.concat(bodies).toString());
      for (const [i, ref] of refs.entries()) {
        const page = await pages.read(ref, { meta: true });
        expect(page?.body.equals(bodies[i])).toBe(true);
        expect(page?.meta).toEqual(meta(`http://a.test/${i}`));
      }
      expect((await pages.read(refs[3]))?.meta).toBeUndefined();
    });

    it('writes a segment when it is full or its time is up, and everything at close', async () => {
      const pages = new SegmentedPageStore(content, { lingerMs: 20, maxPages: 3 });
      await Promise.all(Array.from({ length: 7 }, (_, i) => pages.store(compressed(codec, `p${i}`), meta(`http://a.test/${i}`))));
      expect((await collectKeys(content.list('pages/'))).filter((k) => !k.endsWith('.index.jsonl'))).toHaveLength(3);
      const late = pages.store(compressed(codec, 'late'), meta('http://a.test/late'));
      await pages.close();
      expect((await pages.read(await late))?.body.toString()).toBe('late');
    });

    it('answers null for a reference to nothing, and refuses what is not a reference', async () => {
      const pages = new SegmentedPageStore(content);
      expect(await pages.read('pages/2026-01-01/nothing-0.gz#0.10')).toBeNull();
      expect(await pages.read('pages/2026-01-01/nothing-0.zst#0.10')).toBeNull();
      await expect(pages.read('staging/x.gz#0.1.2')).rejects.toThrow(/not a stored page reference/);
      await expect(pages.read('pages/2026-01-01/x.br#0.10')).rejects.toThrow(/not a stored page reference/);
    });
  });
}

const inDirectory = async () => {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'pages-'));
  return { content: new FsContentStore(root), cleanup: () => fs.rm(root, { recursive: true, force: true }) };
};

for (const codec of CODECS) pageStoreContract('a directory', codec, inDirectory);

describeCodec('zstd', 'SegmentedPageStore across a switch of codec', () => {
  let store: Awaited<ReturnType<typeof inDirectory>>;
  beforeEach(async () => {
    store = await inDirectory();
  });
  afterEach(() => store.cleanup());

  it('reads the gzip pages written before the crawl switched to zstd, and writes the new ones as zstd', async () => {
    const before = new SegmentedPageStore(store.content);
    const old = await before.store(compressed('gzip', 'an old page'), meta('http://a.test/old'));
    await before.close();
    const after = new SegmentedPageStore(store.content);
    const fresh = await after.store(compressed('zstd', 'a new page'), meta('http://a.test/new'));
    expect(old).toMatch(/\.gz#0\.\d+$/);
    expect(fresh).toMatch(/\.zst#0\.\d+$/);
    expect((await after.read(old, { meta: true }))?.body.toString()).toBe('an old page');
    expect((await after.read(old, { meta: true }))?.meta?.url).toBe('http://a.test/old');
    expect((await after.read(fresh))?.body.toString()).toBe('a new page');
  });

  it('puts pages of each codec stored together in a segment of their own (a page staged before the switch)', async () => {
    const pages = new SegmentedPageStore(store.content, { lingerMs: 5000, maxPages: 4 });
    const stored = ['a', 'b', 'c', 'd'].map((body, i) => pages.store(compressed(i % 2 ? 'gzip' : 'zstd', body), meta(`http://a.test/${body}`)));
    await pages.close();
    const refs = await Promise.all(stored);
    const segments = new Set(refs.map((ref) => parsePageRef(ref).key));
    expect([...segments].map((key) => path.extname(key)).sort()).toEqual(['.gz', '.zst']);
    expect(await Promise.all(refs.map(async (ref) => (await pages.read(ref))?.body.toString()))).toEqual(['a', 'b', 'c', 'd']);
  });
});

describe('on S3', () => {
  let s3: S3TestServer;
  beforeAll(async () => {
    s3 = await startS3TestServer();
  });
  afterAll(() => s3?.close());
  for (const codec of CODECS) {
    pageStoreContract('S3', codec, async () => {
      const content = await MinioContentStore.connect({ url: s3.url, bucket: `pages-${randomUUID().slice(0, 18)}` });
      return {
        content,
        cleanup: async () => {
          for (const key of await collectKeys(content.list(''))) await content.delete(key);
        },
      };
    });
  }
});
