import { bloomParameters } from '@crawler/bloom';
import { loadConfig } from '@crawler/config';
import { CrawlUrl } from '@crawler/contracts';
import { MemoryStateStore, RedisStateStore, StateStore } from '@crawler/state';
import { UrlSeenService } from './url-seen.service';

const REDIS_URL = 'redis://127.0.0.1:6379';
const config = () => loadConfig({}, { 'seen.expectedUrls': 10_000, 'seen.falsePositiveRate': 0.001 });
const link = (url: string, depth = 1): CrawlUrl => ({ url, depth, source: 'link', hops: 0 });
const urls = (n: number, prefix = 'http://site.test/page/') => Array.from({ length: n }, (_, i) => link(`${prefix}${i}`));

/** 20 concurrent calls, alternating between two services, each admitting the same 100 URLs. */
async function race(a: UrlSeenService, b: UrlSeenService) {
  const batch = urls(100, 'http://race.test/');
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).admit([...batch].reverse())));
  const admitted = results.flat().map((u) => u.url);
  expect(admitted).toHaveLength(100);
  expect(new Set(admitted).size).toBe(100);
  expect(new Set(admitted)).toEqual(new Set(batch.map((u) => u.url)));
}

describe('UrlSeenService (memory store)', () => {
  it('admits a URL once', async () => {
    const seen = new UrlSeenService(new MemoryStateStore(), config());
    expect(await seen.admit([link('http://site.test/a')])).toEqual([link('http://site.test/a')]);
    expect(await seen.admit([link('http://site.test/a')])).toEqual([]);
    expect(await seen.admit([link('http://site.test/a', 5), link('http://site.test/b')])).toEqual([link('http://site.test/b')]);
  });

  it('collapses repeats within one batch to one admission', async () => {
    const seen = new UrlSeenService(new MemoryStateStore(), config());
    const fresh = await seen.admit([link('http://site.test/x'), link('http://site.test/y'), link('http://site.test/x', 3), link('http://site.test/y')]);
    expect(fresh.map((u) => u.url)).toEqual(['http://site.test/x', 'http://site.test/y']);
  });

  it('answers an empty batch with nothing', async () => {
    const seen = new UrlSeenService(new MemoryStateStore(), config());
    expect(await seen.admit([])).toEqual([]);
  });

  it('admits many distinct URLs (no false positives at this fill)', async () => {
    const seen = new UrlSeenService(new MemoryStateStore(), config());
    expect(await seen.admit(urls(1000))).toHaveLength(1000);
    expect(await seen.admit(urls(1000))).toEqual([]);
  });

  it('keeps its bits in its own namespace', async () => {
    const state = new MemoryStateStore();
    await new UrlSeenService(state, config()).admit(urls(5));
    expect(await state.namespace('url-seen').bitCount('bloom')).toBeGreaterThan(0);
    expect(await state.bitCount('bloom')).toBe(0);
  });

  it('never lets two instances sharing a store both admit a URL', async () => {
    const state = new MemoryStateStore();
    await race(new UrlSeenService(state, config()), new UrlSeenService(state, config()));
  });

  it('reports the filter’s size from configuration and how full it is', async () => {
    const seen = new UrlSeenService(new MemoryStateStore(), config());
    const expected = bloomParameters(10_000, 0.001);
    const empty = await seen.fill();
    expect(empty).toEqual({ ...expected, bitsSet: 0, fillRatio: 0, falsePositiveRate: 0 });
    expect(expected.bits).toBeGreaterThan(10_000 * 14);
    expect(expected.hashes).toBe(10);

    await seen.admit(urls(100));
    const after = await seen.fill();
    expect(after.bits).toBe(expected.bits);
    expect(after.hashes).toBe(expected.hashes);
    expect(after.bitsSet).toBeGreaterThan(900);
    expect(after.bitsSet).toBeLessThanOrEqual(100 * expected.hashes);
    expect(after.fillRatio).toBeCloseTo(after.bitsSet / expected.bits, 10);
    expect(after.fillRatio).toBeGreaterThan(0);
    expect(after.falsePositiveRate).toBeGreaterThan(0);
    expect(after.falsePositiveRate).toBeLessThan(0.001);
  });
});

describe('UrlSeenService (Redis store)', () => {
  const prefix = `test-url-seen-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const stores: StateStore[] = [];
  const store = () => {
    const s = new RedisStateStore({ url: REDIS_URL, prefix });
    stores.push(s);
    return s;
  };

  afterEach(async () => {
    await stores[0]?.clear();
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });

  it('admits a URL once, across connections', async () => {
    const a = new UrlSeenService(store(), config());
    const b = new UrlSeenService(store(), config());
    expect(await a.admit([link('http://site.test/a'), link('http://site.test/a')])).toHaveLength(1);
    expect(await b.admit([link('http://site.test/a'), link('http://site.test/b')])).toEqual([link('http://site.test/b')]);
  });

  it('never lets two instances on separate connections both admit a URL', async () => {
    await race(new UrlSeenService(store(), config()), new UrlSeenService(store(), config()));
  });

  it('reports the fill of the shared bitmap', async () => {
    const a = new UrlSeenService(store(), config());
    const b = new UrlSeenService(store(), config());
    await a.admit(urls(50));
    const fill = await b.fill();
    expect(fill).toMatchObject(bloomParameters(10_000, 0.001));
    expect(fill.fillRatio).toBeGreaterThan(0);
    expect(fill.bitsSet).toBe((await a.fill()).bitsSet);
  });

  it('leaves no key behind after clear()', async () => {
    const s = store();
    await new UrlSeenService(s, config()).admit(urls(3));
    await s.clear();
    expect(await new UrlSeenService(s, config()).fill()).toMatchObject({ bitsSet: 0 });
  });
});
