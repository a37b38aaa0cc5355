import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
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

function pageStoreContract(name: string, make: () => Promise<{ content: ContentStore; cleanup: () => Promise<void> }>) {
  describe(`SegmentedPageStore on ${name}`, () => {
    let content: ContentStore;
    let cleanup: () => Promise<void>;
    beforeEach(async () => ({ content, cleanup } = await make()));
    afterEach(() => cleanup());

    it('stores pages stored together in one segment and its index, each page readable by its reference', async () => {
      const pages = new SegmentedPageStore(content, { lingerMs: 5000, maxPages: 20 });
      const bodies = Array.from({ length: 20 }, (_, i) => Buffer.from(`<html>page ${i} ${'x'.repeat(i * 50)}</html>`));
      const refs = await Promise.all(bodies.map((b, i) => pages.store(gzipSync(b), meta(`http://a.test/${i}`))));
      const keys = await collectKeys(content.list('pages/'));
      expect(keys).toHaveLength(2);
      const segment = parsePageRef(refs[0]).key;
      expect(keys).toEqual([indexKeyOf(segment), segment].sort());
      // The segment is one gzip file: the pages, one after the other.
      expect(gunzipSync((await content.get(segment))!.body).toString()).toBe(Buffer.concat(bodies).toString());
      for (const [i, ref] of refs.entries()) {
        const page = await pages.read(ref, { meta: true });
        expect(page?.body.equals(bodies[i])).toBe(true);
        expect(page?.meta).toEqual(meta(`http://a.test/${i}`));
      }
      expect((await pages.read(refs[3]))?.meta).toBeUndefined();
    });

    it('writes a segment when it is full or its time is up, and everything at close', async () => {
      const pages = new SegmentedPageStore(content, { lingerMs: 20, maxPages: 3 });
      await Promise.all(Array.from({ length: 7 }, (_, i) => pages.store(gzipSync(Buffer.from(`p${i}`)), meta(`http://a.test/${i}`))));
      expect((await collectKeys(content.list('pages/'))).filter((k) => k.endsWith('.gz'))).toHaveLength(3);
      const late = pages.store(gzipSync(Buffer.from('late')), meta('http://a.test/late'));
      await pages.close();
      expect((await pages.read(await late))?.body.toString()).toBe('late');
    });

    it('answers null for a reference to nothing, and refuses what is not a reference', async () => {
      const pages = new SegmentedPageStore(content);
      expect(await pages.read('pages/2026-01-01/nothing-0.gz#0.10')).toBeNull();
      await expect(pages.read('staging/x.gz#0.1.2')).rejects.toThrow(/not a stored page reference/);
    });
  });
}

pageStoreContract('a directory', async () => {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'pages-'));
  return { content: new FsContentStore(root), cleanup: () => fs.rm(root, { recursive: true, force: true }) };
});

describe('on S3', () => {
  let s3: S3TestServer;
  beforeAll(async () => {
    s3 = await startS3TestServer();
  });
  afterAll(() => s3?.close());
  pageStoreContract('S3', async () => {
    const content = await MinioContentStore.connect({ url: s3.url, bucket: `pages-${randomUUID().slice(0, 18)}` });
    return {
      content,
      cleanup: async () => {
        for (const key of await collectKeys(content.list(''))) await content.delete(key);
      },
    };
  });
});
