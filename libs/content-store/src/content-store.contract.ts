/// <reference types="jest" />
// The reference keeps this file compiling in the production build (tsconfig.build.json has no jest
// types); jest's globals are touched only when contentStoreContract() runs, i.e. inside a test file.
import { randomBytes, randomUUID } from 'node:crypto';
import type { ContentStore } from './content-store';

export async function collectKeys(keys: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const key of keys) out.push(key);
  return out.sort();
}

/** Keys every driver must refuse: traversal, absolute, empty or doubled segments, characters outside the set. */
export const INVALID_KEYS = ['../x', '/abs', 'a/../../b', '', 'a//b', 'a/', './a', 'a b', 'caf\u00e9', 'a\\b', 'a\0b'];

/**
 * The behaviour every ContentStore driver must show. `make` runs once before the suite, `teardown` once
 * after it; each test works under its own random prefix, so a shared bucket or directory is fine.
 */
export function contentStoreContract(name: string, make: () => Promise<ContentStore>, teardown: (store: ContentStore) => Promise<void>): void {
  describe(`ContentStore contract: ${name}`, () => {
    let store: ContentStore;
    let base: string;

    beforeAll(async () => {
      store = await make();
    });
    afterAll(async () => {
      if (store) await teardown(store);
    });
    beforeEach(() => {
      base = `t-${randomUUID()}`;
    });

    it('reads a range of an object, shorter at its end, and null for a missing key', async () => {
      const key = `${base}/ranged`;
      await store.put(key, Buffer.from('0123456789'));
      expect((await store.getRange(key, 2, 3))?.toString()).toBe('234');
      expect((await store.getRange(key, 8, 10))?.toString()).toBe('89');
      expect((await store.getRange(key, 0, 0))?.toString()).toBe('');
      expect(await store.getRange(`${base}/missing`, 0, 5)).toBeNull();
      await expect(store.getRange(key, -1, 2)).rejects.toThrow(/invalid range/);
    });

    it('round-trips every byte value', async () => {
      const body = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      await store.put(`${base}/bytes.bin`, body);
      const got = await store.get(`${base}/bytes.bin`);
      expect(got?.body.equals(body)).toBe(true);
      expect(got?.meta).toEqual({});
    });

    it('round-trips a 1 MiB body', async () => {
      const body = randomBytes(1024 * 1024);
      await store.put(`${base}/big.bin`, body);
      const got = await store.get(`${base}/big.bin`);
      expect(got?.body.length).toBe(body.length);
      expect(got?.body.equals(body)).toBe(true);
    });

    it('round-trips metadata exactly: non-ASCII values, awkward characters, key case', async () => {
      const meta = {
        url: 'https://example.com/caf\u00e9?q=\u00e9t\u00e9&x=%41',
        title: '\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440 \ud83d\udd77',
        contentType: 'text/html; charset=utf-8',
        'X-Mixed-Case': 'kept',
        'content-type': 'a user key that looks like a header',
        'with space/and:colon': '  leading and trailing spaces  ',
        empty: '',
        newline: 'a\r\nb',
      };
      await store.put(`${base}/page.html`, Buffer.from('<html></html>'), meta);
      const got = await store.get(`${base}/page.html`);
      expect(got?.meta).toEqual(meta);
      expect(Object.keys(got?.meta ?? {}).sort()).toEqual(Object.keys(meta).sort());
    });

    it('overwrites body and metadata (old metadata keys do not survive)', async () => {
      const key = `${base}/doc`;
      await store.put(key, Buffer.from('first'), { a: '1', b: '2' });
      await store.put(key, Buffer.from('second'), { a: '3' });
      const got = await store.get(key);
      expect(got?.body.toString()).toBe('second');
      expect(got?.meta).toEqual({ a: '3' });
    });

    it('reports a missing key as null / false', async () => {
      expect(await store.get(`${base}/missing`)).toBeNull();
      expect(await store.exists(`${base}/missing`)).toBe(false);
      await store.put(`${base}/present`, Buffer.alloc(0));
      expect(await store.exists(`${base}/present`)).toBe(true);
      expect((await store.get(`${base}/present`))?.body.length).toBe(0);
    });

    it('deletes idempotently', async () => {
      const key = `${base}/gone`;
      await store.delete(key);
      await store.put(key, Buffer.from('x'));
      await store.delete(key);
      expect(await store.get(key)).toBeNull();
      expect(await store.exists(key)).toBe(false);
      await store.delete(key);
    });

    it('lets "a" be stored once "a/b" is deleted', async () => {
      await store.put(`${base}/a/b`, Buffer.from('child'));
      await store.delete(`${base}/a/b`);
      await store.put(`${base}/a`, Buffer.from('parent'));
      expect((await store.get(`${base}/a`))?.body.toString()).toBe('parent');
    });

    it('lists every key under a prefix, nested ones included, others excluded', async () => {
      const inside = ['p/a', 'p/b/c', 'p/b/d/e', 'p/bz/1'].map((k) => `${base}/${k}`);
      const outside = ['p-other/x', 'q/p/z', 'pa'].map((k) => `${base}/${k}`);
      for (const key of [...inside, ...outside]) await store.put(key, Buffer.from(key));

      expect(await collectKeys(store.list(`${base}/p/`))).toEqual(inside.sort());
      // S3 semantics: a prefix is a string prefix, so 'p/b' matches 'p/b/…' and 'p/bz/…'.
      expect(await collectKeys(store.list(`${base}/p/b`))).toEqual(inside.slice(1).sort());
      expect(await collectKeys(store.list(`${base}/p/b/`))).toEqual(inside.slice(1, 3).sort());
      expect(await collectKeys(store.list(`${base}/nothing/`))).toEqual([]);
    });

    it('answers ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });

    it.each(INVALID_KEYS.map((k) => [JSON.stringify(k), k]))('rejects the key %s', async (_label, key) => {
      await expect(store.put(key, Buffer.from('x'))).rejects.toThrow(/content store: .*key/);
      await expect(store.get(key)).rejects.toThrow(/content store: .*key/);
      await expect(store.exists(key)).rejects.toThrow(/content store: .*key/);
      await expect(store.delete(key)).rejects.toThrow(/content store: .*key/);
    });

    it('rejects traversal in a list prefix and an empty metadata key', async () => {
      await expect(collectKeys(store.list('../'))).rejects.toThrow(/invalid prefix/);
      await expect(collectKeys(store.list('a/../../'))).rejects.toThrow(/invalid prefix/);
      await expect(store.put(`${base}/m`, Buffer.from('x'), { '': 'v' })).rejects.toThrow(/metadata keys/);
    });
  });
}
