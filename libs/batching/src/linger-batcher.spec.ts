import { LingerBatcher } from './linger-batcher';

/** A write that records its batches and answers each item doubled. */
function recorder() {
  const batches: number[][] = [];
  const write = async (items: number[]) => {
    batches.push(items);
    return items.map((i) => i * 2);
  };
  return { batches, write };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('LingerBatcher', () => {
  it('writes the items added within the linger as one batch, each caller answered its own results in order', async () => {
    const { batches, write } = recorder();
    const batcher = new LingerBatcher(write, { lingerMs: 20, maxItems: 100 });
    const a = batcher.addAll([1, 2]);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const b = batcher.add(3);
    const c = batcher.addAll([4, 5, 6]);
    expect(batches).toEqual([]);
    expect(await Promise.all([a, b, c])).toEqual([[2, 4], 6, [8, 10, 12]]);
    expect(batches).toEqual([[1, 2, 3, 4, 5, 6]]);
    await batcher.drain();
  });

  it('seals a batch at once when it holds maxItems, or weighs maxBytes', async () => {
    const { batches, write } = recorder();
    const byCount = new LingerBatcher(write, { lingerMs: 60_000, maxItems: 3 });
    const first = byCount.addAll([1, 2]);
    const second = byCount.addAll([3, 4]);
    const third = byCount.add(5);
    expect(batches).toEqual([[1, 2, 3, 4]]);
    expect(await Promise.all([first, second])).toEqual([
      [2, 4],
      [6, 8],
    ]);
    const byBytes = new LingerBatcher(write, { lingerMs: 60_000, maxItems: 100, maxBytes: 10, bytesOf: (i) => i });
    const heavy = [byBytes.add(4), byBytes.add(5), byBytes.add(1)];
    expect(batches).toEqual([
      [1, 2, 3, 4],
      [4, 5, 1],
    ]);
    expect(await Promise.all(heavy)).toEqual([8, 10, 2]);
    await byCount.drain();
    expect(await third).toBe(10);
  });

  it('with no linger, batches only what is added in the same turn of the event loop', async () => {
    const { batches, write } = recorder();
    const batcher = new LingerBatcher(write, { lingerMs: 0, maxItems: 100 });
    const same = [batcher.add(1), batcher.add(2)];
    await turn();
    const next = batcher.add(3);
    expect(await Promise.all([...same, next])).toEqual([2, 4, 6]);
    expect(batches).toEqual([[1, 2], [3]]);
  });

  it('rejects every caller of a batch whose write fails, and only those', async () => {
    let fail = true;
    const batcher = new LingerBatcher(
      async (items: number[]) => {
        if (fail) throw new Error('store down');
        return items;
      },
      { lingerMs: 0, maxItems: 100 },
    );
    const failed = [batcher.add(1), batcher.addAll([2, 3])];
    await expect(failed[0]).rejects.toThrow('store down');
    await expect(failed[1]).rejects.toThrow('store down');
    fail = false;
    expect(await batcher.add(4)).toBe(4);
  });

  it('answers callers an empty array when the write answers nothing, and an empty call at once', async () => {
    const batcher = new LingerBatcher<number>(async () => undefined, { lingerMs: 0, maxItems: 100 });
    expect(await batcher.addAll([1, 2])).toEqual([]);
    expect(await batcher.addAll([])).toEqual([]);
  });

  it('drain writes the batch filling and waits for every batch in flight', async () => {
    const written: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const batcher = new LingerBatcher(
      async (items: number[]) => {
        await gate;
        written.push(items);
      },
      { lingerMs: 60_000, maxItems: 2 },
    );
    void batcher.addAll([1, 2]);
    void batcher.add(3);
    let drained = false;
    const draining = batcher.drain().then(() => (drained = true));
    await turn();
    expect(drained).toBe(false);
    release();
    await draining;
    expect(written).toEqual([[1, 2], [3]]);
  });

  it('flush writes the batch filling and waits for the batches sealed so far, not for those sealed after', async () => {
    const written: number[][] = [];
    const gates: (() => void)[] = [];
    const batcher = new LingerBatcher(
      async (items: number[]) => {
        await new Promise<void>((resolve) => gates.push(resolve));
        written.push(items);
      },
      { lingerMs: 60_000, maxItems: 100 },
    );
    void batcher.add(1);
    const flushed = batcher.flush();
    void batcher.add(2);
    const later = batcher.flush();
    gates[0]();
    await flushed;
    expect(written).toEqual([[1]]);
    gates[1]();
    await later;
    expect(written).toEqual([[1], [2]]);
  });
});
