import { MemoryStateStore } from '@crawler/state';
import { BloomSeenSet, MAX_URLS_PER_STEP } from './bloom-seen-set';

/** A memory store that counts its test-and-set steps, and fails them while `failing` is set. */
function countingStore() {
  const store = new MemoryStateStore();
  const steps: number[] = [];
  const control = { failing: false };
  const bitsTestAndSet = store.bitsTestAndSet.bind(store);
  store.bitsTestAndSet = async (key: string, groups: number[][]) => {
    steps.push(groups.length);
    if (control.failing) throw new Error('Redis is down');
    return bitsTestAndSet(key, groups);
  };
  return { store, steps, control };
}

const urls = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `http://${prefix}.test/${i}`);

describe('BloomSeenSet, concurrent callers', () => {
  it('shares one step a shard among the callers of one turn, each answered for its own URLs', async () => {
    const { store, steps } = countingStore();
    const set = new BloomSeenSet(store, 100_000, 0.001, 16);
    const batches = Array.from({ length: 20 }, (_, i) => urls(`host-${i}`, 4));
    const answers = await Promise.all(batches.map((batch) => set.testAndAdd(batch)));
    expect(answers).toEqual(batches.map((batch) => batch.map(() => false)));
    // 80 URLs over 16 shards: one step for each shard touched, not one for each caller and shard.
    expect(steps.length).toBeLessThanOrEqual(16);
    expect(steps.reduce((a, b) => a + b, 0)).toBe(80);
    expect(await set.testAndAdd(batches[3])).toEqual([true, true, true, true]);
  });

  it('admits a URL asked by two callers at once only once', async () => {
    const { store } = countingStore();
    const set = new BloomSeenSet(store, 100_000, 0.001, 16);
    const [a, b] = await Promise.all([set.testAndAdd(['http://a.test/x', 'http://a.test/y']), set.testAndAdd(['http://a.test/y', 'http://a.test/z'])]);
    expect([...a, ...b]).toEqual([false, false, true, false]);
  });

  it('gathers what callers ask while a step is in flight into the next one, never more than the most a step carries', async () => {
    const { store, steps } = countingStore();
    const set = new BloomSeenSet(store, 10_000_000, 0.01, 1);
    const first = set.testAndAdd(urls('first', 1));
    await new Promise((r) => setImmediate(r));
    const rest = await Promise.all([set.testAndAdd(urls('big', MAX_URLS_PER_STEP)), set.testAndAdd(urls('small', 3)), set.testAndAdd(urls('more', 2))]);
    expect(await first).toEqual([false]);
    expect(rest.map((r) => r.length)).toEqual([MAX_URLS_PER_STEP, 3, 2]);
    expect(steps).toEqual([1, MAX_URLS_PER_STEP, 5]);
  });

  it('fails every caller of a failed step, and takes the next callers afresh', async () => {
    const { store, control } = countingStore();
    const set = new BloomSeenSet(store, 100_000, 0.001, 1);
    control.failing = true;
    const failed = await Promise.allSettled([set.testAndAdd(urls('a', 2)), set.testAndAdd(urls('b', 2))]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    control.failing = false;
    // Nothing of the failed step was set: asked again, the URLs are new.
    expect(await set.testAndAdd(urls('a', 2))).toEqual([false, false]);
  });
});
