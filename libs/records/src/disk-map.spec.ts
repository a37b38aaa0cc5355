import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { murmur3_32 } from '@crawler/murmur3';
import { DiskMap } from './disk-map';

// A collection before each reading of memory, so that only what is kept is counted.
setFlagsFromString('--expose-gc');

describe('DiskMap', () => {
  let dir: string;
  let map: DiskMap<unknown>;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'disk-map-'));
    map = new DiskMap(join(dir, 'map.jsonl'));
  });

  afterEach(() => {
    map.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers every key it was given, past many growths of its table, and nothing for others', () => {
    for (let i = 0; i < 20_000; i++) map.set(`http://host-${i % 97}.test/p/${i}`, { n: i, text: 'é✓'.repeat(i % 5) });
    expect(map.size).toBe(20_000);
    for (let i = 0; i < 20_000; i += 7) expect(map.get(`http://host-${i % 97}.test/p/${i}`)).toEqual({ n: i, text: 'é✓'.repeat(i % 5) });
    expect(map.get('http://host-1.test/p/20001')).toBeUndefined();
  });

  it('answers the latest value of a key set again, and counts it once', () => {
    map.set('k', 1);
    map.set('other', 'x');
    map.set('k', { v: 2 });
    expect(map.get('k')).toEqual({ v: 2 });
    expect(map.get('other')).toBe('x');
    expect(map.size).toBe(2);
  });

  it('tells apart two keys of the same 32-bit hash: a hash is only where to look, the key on disk decides', () => {
    const seen = new Map<number, string>();
    let pair: [string, string] | undefined;
    for (let i = 0; !pair; i++) {
      const key = `key-${i}`;
      const hash = murmur3_32(key);
      const earlier = seen.get(hash);
      if (earlier !== undefined) pair = [earlier, key];
      seen.set(hash, key);
    }
    const [a, b] = pair;
    map.set(a, 'first');
    expect(map.get(b)).toBeUndefined();
    map.set(b, 'second');
    expect([map.get(a), map.get(b), map.size]).toEqual(['first', 'second', 2]);
  });

  it('reads a value larger than its write block, and values written out or not yet', () => {
    const large = 'x'.repeat(100_000);
    map.set('small', 1);
    map.set('large', large);
    map.set('after', 2);
    expect([map.get('small'), map.get('large'), map.get('after')]).toEqual([1, large, 2]);
  });

  it('keeps nothing in memory that grows with its keys: the index is a file too', async () => {
    const gc = runInNewContext('gc') as () => void;
    // The count is the whole process's: a passing buffer of something else in it (12 MiB once, on Node.js 24 in
    // a busy CI run) may be alive at one reading, so the least of a few readings a moment apart.
    const external = async () => {
      let least = Infinity;
      for (let reading = 0; reading < 5; reading++) {
        if (reading) await new Promise((resolve) => setTimeout(resolve, 100));
        gc();
        least = Math.min(least, process.memoryUsage().arrayBuffers);
      }
      return least;
    };
    for (let i = 0; i < 1000; i++) map.set(`warm-${i}`, i);
    const before = await external();
    for (let i = 0; i < 150_000; i++) map.set(`https://site-${i % 1000}.test/p/${i}`, { status: 200 });
    // An index of 150,000 keys in memory takes about 6 MB (24–40 bytes a key); on disk, nothing.
    expect((await external()) - before).toBeLessThan(2 * 2 ** 20);
    expect(map.get('https://site-7.test/p/149007')).toEqual({ status: 200 });
    expect(statSync(`${map.path}.index`).size).toBeGreaterThanOrEqual(2 * 151_000 * 16);
    // 150,000 writes of a few syscalls each: seconds on a quiet machine, more on a busy one.
  }, 90_000);

  it('keeps its values in its file, one JSON line each, written out when closed, and starts empty on a file written before', () => {
    map.set('a', { x: 1 });
    map.close();
    expect(readFileSync(map.path, 'utf8')).toBe('["a",{"x":1}]\n');
    map = new DiskMap(join(dir, 'map.jsonl'));
    expect(map.get('a')).toBeUndefined();
    expect(readFileSync(map.path, 'utf8')).toBe('');
  });
});
