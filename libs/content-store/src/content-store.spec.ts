import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { collectKeys, contentStoreContract } from './content-store.contract';
import { FsContentStore } from './fs-content-store.driver';
import { decodeMetaName, encodeMetaName, MinioContentStore, parseS3Url } from './minio-content-store.driver';
import { S3TestServer, startS3TestServer } from './s3-test-server';

/** Unique per run, so runs sharing one CI server never see each other's objects. */
const uniqueBucket = () => `cs-test-${randomUUID().slice(0, 18)}`;

let s3: S3TestServer;
beforeAll(async () => {
  s3 = await startS3TestServer();
});
afterAll(async () => {
  await s3?.close();
});

contentStoreContract(
  'MinioContentStore on the S3 stand-in (scripts/s3-server.js)',
  () => MinioContentStore.connect({ url: s3.url, bucket: uniqueBucket() }),
  async (store) => {
    // Empty the bucket: against a shared CI server it would otherwise outlive the run.
    for (const key of await collectKeys(store.list(''))) await store.delete(key);
  },
);

let fsRoot: string;
contentStoreContract(
  'FsContentStore',
  async () => {
    fsRoot = await fs.mkdtemp(path.join(os.tmpdir(), 'content-store-'));
    return new FsContentStore(fsRoot);
  },
  () => fs.rm(fsRoot, { recursive: true, force: true }),
);

describe('MinioContentStore specifics', () => {
  it('parses credentials, host, port and TLS from the URL', () => {
    expect(parseS3Url('http://AK:S%2Fk%2B@127.0.0.1:9000')).toEqual({
      endPoint: '127.0.0.1',
      port: 9000,
      useSSL: false,
      accessKey: 'AK',
      secretKey: 'S/k+',
    });
    expect(parseS3Url('https://a:b@s3.example.com')).toMatchObject({ port: 443, useSSL: true });
    expect(() => parseS3Url('ftp://x')).toThrow(/http: or https:/);
    expect(() => parseS3Url('http://a:b@h:1/bucket')).toThrow(/must not have a path/);
  });

  it('encodes metadata names reversibly into [a-z0-9-]', () => {
    for (const name of ['contentType', 'content-type', 'a--b', '-X-', 'caf\u00e9', '\u0438\u043c\u044f', 'x_y.z', '\ud83d\udd77']) {
      const encoded = encodeMetaName(name);
      expect(encoded).toMatch(/^[a-z0-9-]+$/);
      expect(decodeMetaName(encoded)).toBe(name);
    }
  });

  it('creates the bucket once when replicas connect concurrently', async () => {
    const bucket = uniqueBucket();
    const stores = await Promise.all([1, 2, 3].map(() => MinioContentStore.connect({ url: s3.url, bucket })));
    await stores[0].put('k', Buffer.from('v'));
    expect((await stores[2].get('k'))?.body.toString()).toBe('v');
    await stores[0].delete('k');
  });

  it('fails ping with the bucket name when the bucket is missing', async () => {
    const store = new MinioContentStore({ url: s3.url, bucket: uniqueBucket() });
    await expect(store.ping()).rejects.toThrow(/bucket cs-test-.* does not exist/);
    await expect(store.get('k')).rejects.toThrow(/content store: get s3:\/\/cs-test-.*\/k failed \(NoSuchBucket\)/);
  });

  it("is refused, with the server's reason, when its secret is wrong", async () => {
    const url = new URL(s3.url);
    url.password = 'not-the-secret';
    await expect(MinioContentStore.connect({ url: url.toString().replace(/\/$/, ''), bucket: uniqueBucket() })).rejects.toThrow(/AccessDenied|SignatureDoesNotMatch/);
    const store = new MinioContentStore({ url: url.toString().replace(/\/$/, ''), bucket: 'anything' });
    await expect(store.put('k', Buffer.from('v'))).rejects.toThrow(/content store: put s3:\/\/anything\/k failed \(SignatureDoesNotMatch\)/);
  });

  it('keeps keys that look like paths apart: a/b beside a/b/c, a/b-x and a/b.c', async () => {
    const store = await MinioContentStore.connect({ url: s3.url, bucket: uniqueBucket() });
    const keys = ['a/b', 'a/b/c', 'a/b-x', 'a/b.c', 'a/b_'];
    for (const key of keys) await store.put(key, Buffer.from(key));
    for (const key of keys) expect((await store.get(key))?.body.toString()).toBe(key);
    expect(await collectKeys(store.list('a/'))).toEqual([...keys].sort());
    for (const key of keys) await store.delete(key);
  });

  it('fails with a clear message when the server is unreachable', async () => {
    const store = new MinioContentStore({ url: 'http://a:b@127.0.0.1:1', bucket: 'nowhere' });
    await expect(store.get('k')).rejects.toThrow(/content store: get s3:\/\/nowhere\/k failed.*ECONNREFUSED/);
  });
});

describe('FsContentStore specifics', () => {
  let parent: string;
  let root: string;
  let store: FsContentStore;
  beforeEach(async () => {
    parent = await fs.mkdtemp(path.join(os.tmpdir(), 'content-store-fs-'));
    root = path.join(parent, 'root');
    store = new FsContentStore(root);
  });
  afterEach(() => fs.rm(parent, { recursive: true, force: true }));

  it('never writes outside its root for traversal attempts', async () => {
    for (const key of ['../x', '/abs', 'a/../../b', '../../escape']) {
      await expect(store.put(key, Buffer.from('evil'))).rejects.toThrow(/invalid key/);
    }
    expect(await fs.readdir(parent)).toEqual([]);
  });

  it('keeps bodies byte for byte under objects/ and metadata under meta/', async () => {
    await store.put('site/page', Buffer.from('body'), { title: 't' });
    expect(await fs.readFile(path.join(root, 'objects/site/page'), 'utf8')).toBe('body');
    expect(JSON.parse(await fs.readFile(path.join(root, 'meta/site/page'), 'utf8'))).toEqual({ title: 't' });
    expect(await fs.readdir(path.join(root, 'tmp'))).toEqual([]);
  });

  it('explains the one thing a directory cannot do: hold both "a" and "a/b"', async () => {
    await store.put('a', Buffer.from('file'));
    await expect(store.put('a/b', Buffer.from('child'))).rejects.toThrow(/cannot hold both/);
    expect(await store.get('a/b')).toBeNull();
    expect(await store.exists('a/b')).toBe(false);
    await store.put('c/d', Buffer.from('child'));
    expect(await store.get('c')).toBeNull();
    await store.delete('c');
    expect(await collectKeys(store.list(''))).toEqual(['a', 'c/d']);
  });

  it('answers ping only when the root is writable', async () => {
    await fs.writeFile(path.join(parent, 'file'), '');
    await expect(new FsContentStore(path.join(parent, 'file')).ping()).rejects.toThrow(/not writable/);
  });
});

describe('FsContentStore under concurrent puts and deletes in one directory', () => {
  it('never fails a put because a delete pruned the directory it was writing into', async () => {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'fs-race-'));
    const store = new FsContentStore(root);
    try {
      for (let round = 0; round < 20; round++) {
        await Promise.all(
          Array.from({ length: 20 }, async (_, i) => {
            const key = `staging/r${round}-${i}`;
            await store.put(key, Buffer.from('x'));
            await store.delete(key);
          }),
        );
      }
    } finally {
      await fs.rm(root, { recursive: true, force: true });
    }
  });
});
