import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { MemoryStateStore, RedisStateStore } from '@crawler/state';
import type { BodyStaging } from './body-staging';
import { BundledBodyStaging, BundledBodyStagingOptions } from './bundled-body-staging.driver';
import { type Codec, decompressSync } from './codec';
import { CODECS, describeCodec } from './codec-test';
import { collectKeys } from './content-store.contract';
import type { ContentStore } from './content-store';
import { FsContentStore } from './fs-content-store.driver';
import { MemoryBodyStaging } from './memory-body-staging.driver';
import { MinioContentStore } from './minio-content-store.driver';
import { S3TestServer, startS3TestServer } from './s3-test-server';

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

interface Harness {
  staging: BodyStaging;
  /** Objects under staging/ in the underlying store (none for memory). */
  stagedObjects(): Promise<string[]>;
  close(): Promise<void>;
}

/** The behaviour every BodyStaging driver shows, compressing with `codec`. */
function bodyStagingContract(name: string, codec: Codec, make: () => Promise<Harness>) {
  describeCodec(codec, `BodyStaging contract: ${name}, ${codec}`, () => {
    let h: Harness;
    beforeEach(async () => {
      h = await make();
    });
    afterEach(() => h.close());

    it('gives back every byte of every body staged, and its compressed form', async () => {
      const bodies = Array.from({ length: 50 }, (_, i) => Buffer.from(Array.from({ length: 1000 + i * 37 }, (_, j) => (j * 7 + i) % 256)));
      const refs = await Promise.all(bodies.map((b) => h.staging.stage(b)));
      expect(new Set(refs).size).toBe(refs.length);
      for (const [i, ref] of refs.entries()) {
        const staged = await h.staging.read(ref);
        expect(staged?.body.equals(bodies[i])).toBe(true);
        const compressed = await staged!.compressed();
        expect(compressed.codec).toBe(codec);
        expect(decompressSync(compressed.bytes, codec).equals(bodies[i])).toBe(true);
      }
    });

    it('keeps a body until it is released, then answers null; releasing twice is harmless', async () => {
      const [a, b] = await Promise.all([h.staging.stage(Buffer.from('a')), h.staging.stage(Buffer.from('b'))]);
      await h.staging.release(a);
      await h.staging.release(a);
      expect((await h.staging.read(b))?.body.toString()).toBe('b');
      await h.staging.release(b);
      expect(await h.staging.read(b)).toBeNull();
      expect(await h.stagedObjects()).toEqual([]);
    });

    it('stages an empty body', async () => {
      const ref = await h.staging.stage(Buffer.alloc(0));
      expect((await h.staging.read(ref))?.body.length).toBe(0);
    });
  });
}

const level = 3;

for (const codec of CODECS) {
  bodyStagingContract('memory', codec, async () => {
    const staging = new MemoryBodyStaging({ codec, level });
    return { staging, stagedObjects: async () => [], close: () => staging.close() };
  });
}

async function bundled(
  content: ContentStore,
  state: MemoryStateStore | RedisStateStore,
  cleanup: () => Promise<void>,
  options: BundledBodyStagingOptions = {},
): Promise<Harness> {
  const staging = new BundledBodyStaging(content, state, options);
  return {
    staging,
    stagedObjects: () => collectKeys(content.list('staging/')),
    close: async () => {
      await staging.close();
      await cleanup();
    },
  };
}

for (const codec of CODECS) {
  bodyStagingContract('bundled on a directory', codec, async () => {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'staging-'));
    return bundled(new FsContentStore(root), new MemoryStateStore(), () => fs.rm(root, { recursive: true, force: true }), { compression: { codec, level } });
  });
}

let s3: S3TestServer;
describe('on S3 and Redis', () => {
  beforeAll(async () => {
    s3 = await startS3TestServer();
  });
  afterAll(() => s3?.close());

  for (const codec of CODECS) {
    bodyStagingContract('bundled on S3, members in Redis', codec, async () => {
      const content = await MinioContentStore.connect({ url: s3.url, bucket: `staging-${randomUUID().slice(0, 18)}` });
      const state = new RedisStateStore({ url: REDIS_URL, prefix: `staging-test-${randomUUID()}` });
      return bundled(
        content,
        state,
        async () => {
          for (const key of await collectKeys(content.list(''))) await content.delete(key);
          await state.clear();
          await state.close();
        },
        { compression: { codec, level } },
      );
    });
  }
});

describe('BundledBodyStaging', () => {
  let root: string;
  let content: FsContentStore;
  beforeEach(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'staging-'));
    content = new FsContentStore(root);
  });
  afterEach(() => fs.rm(root, { recursive: true, force: true }));

  it('writes bodies staged together as one object, deleted with its last body', async () => {
    const staging = new BundledBodyStaging(content, new MemoryStateStore(), { lingerMs: 5000, maxBodies: 10 });
    const refs = await Promise.all(Array.from({ length: 10 }, (_, i) => staging.stage(Buffer.from(`body ${i}`))));
    const objects = await collectKeys(content.list('staging/'));
    expect(objects).toHaveLength(1);
    // The object is itself a gzip file: the members one after the other (in the order they were compressed).
    const whole = gunzipSync((await content.get(objects[0]))!.body).toString();
    expect(whole.match(/body \d/g)!.sort()).toEqual(Array.from({ length: 10 }, (_, i) => `body ${i}`));
    for (const ref of refs.slice(0, 9)) await staging.release(ref);
    expect(await collectKeys(content.list('staging/'))).toHaveLength(1);
    await staging.release(refs[9]);
    expect(await collectKeys(content.list('staging/'))).toEqual([]);
  });

  it('releases the bodies released at once in one step a bundle', async () => {
    const state = new MemoryStateStore();
    const staging = new BundledBodyStaging(content, state, { lingerMs: 5000, maxBodies: 10 });
    const refs = await Promise.all(Array.from({ length: 10 }, (_, i) => staging.stage(Buffer.from(`body ${i}`))));
    const removes = jest.spyOn(state, 'setRemove');
    await Promise.all(refs.map((ref) => staging.release(ref)));
    expect(removes).toHaveBeenCalledTimes(1);
    expect(await collectKeys(content.list('staging/'))).toEqual([]);
    await expect(staging.release('staging/a-0.br#0.0.1')).rejects.toThrow(/not a staged body reference/);
  });

  it('starts a new bundle when one is full, by count or by bytes', async () => {
    const staging = new BundledBodyStaging(content, new MemoryStateStore(), { maxBodies: 4, maxBytes: 1 << 20, lingerMs: 1000 });
    await Promise.all(Array.from({ length: 8 }, (_, i) => staging.stage(Buffer.from(`x${i}`))));
    expect(await collectKeys(content.list('staging/'))).toHaveLength(2);
  });

  it('a reader in another process finds the bodies, and the last release there frees the bundle', async () => {
    const state = new MemoryStateStore();
    const writer = new BundledBodyStaging(content, state);
    const reader = new BundledBodyStaging(content, state);
    const refs = await Promise.all([writer.stage(Buffer.from('one')), writer.stage(Buffer.from('two'))]);
    expect((await reader.read(refs[1]))?.body.toString()).toBe('two');
    await writer.release(refs[0]);
    await reader.release(refs[1]);
    expect(await collectKeys(content.list('staging/'))).toEqual([]);
    expect(await reader.read(refs[0])).toBeNull();
  });

  it('fails every body of a bundle whose write failed, and refuses a malformed reference', async () => {
    const broken: ContentStore = Object.assign(Object.create(content), { put: async () => Promise.reject(new Error('disk full')) });
    const staging = new BundledBodyStaging(broken, new MemoryStateStore());
    await expect(Promise.all([staging.stage(Buffer.from('a')), staging.stage(Buffer.from('b'))])).rejects.toThrow(/disk full/);
    await expect(staging.read('pages/x.html.gz')).rejects.toThrow(/not a staged body reference/);
    await expect(staging.read('staging/a-0.br#0.0.1')).rejects.toThrow(/not a staged body reference/);
  });

  describeCodec('zstd', 'zstd', () => {
    it('writes a bundle as one zstd file, its frames one after the other', async () => {
      const staging = new BundledBodyStaging(content, new MemoryStateStore(), { lingerMs: 5000, maxBodies: 3, compression: { codec: 'zstd', level } });
      const refs = await Promise.all(['one', 'two', 'three'].map((body) => staging.stage(Buffer.from(body))));
      expect(refs.every((ref) => /^staging\/[A-Za-z0-9]+-0\.zst#\d\.\d+\.\d+$/.test(ref))).toBe(true);
      const [bundle] = await collectKeys(content.list('staging/'));
      expect(decompressSync((await content.get(bundle))!.body, 'zstd').toString()).toMatch(/^(one|two|three){3}$/);
    });

    it('reads, after a switch to zstd, the gzip bundles staged before it, and hands on their members as gzip', async () => {
      const state = new MemoryStateStore();
      const before = new BundledBodyStaging(content, state, { compression: { codec: 'gzip', level } });
      const old = await before.stage(Buffer.from('staged before'));
      await before.close();
      const after = new BundledBodyStaging(content, state, { compression: { codec: 'zstd', level } });
      const fresh = await after.stage(Buffer.from('staged after'));
      const staged = (await after.read(old))!;
      expect(staged.body.toString()).toBe('staged before');
      const member = await staged.compressed();
      expect(member.codec).toBe('gzip');
      expect(gunzipSync(member.bytes).toString()).toBe('staged before');
      expect((await (await after.read(fresh))!.compressed()).codec).toBe('zstd');
      await after.release(old);
      await after.release(fresh);
      expect(await collectKeys(content.list('staging/'))).toEqual([]);
      await after.close();
    });
  });
});

for (const codec of CODECS) {
  bodyStagingContract('memory, compressing on a thread', codec, async () => {
    const staging = new MemoryBodyStaging({ codec, level }, 1);
    return { staging, stagedObjects: async () => [], close: () => staging.close() };
  });

  bodyStagingContract('bundled on a directory, compressing on a thread', codec, async () => {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'staging-'));
    return bundled(new FsContentStore(root), new MemoryStateStore(), () => fs.rm(root, { recursive: true, force: true }), {
      compression: { codec, level },
      threads: 1,
    });
  });
}
