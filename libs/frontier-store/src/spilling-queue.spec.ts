import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpillFile, SpillingQueue } from './spilling-queue';

describe('SpillingQueue', () => {
  let dir: string;
  let spill: SpillFile;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'spilling-queue-'));
    spill = new SpillFile(join(dir, 'queued.spill'));
  });

  afterEach(() => {
    spill.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the order of a plain FIFO through pushes, shifts, unshifts and pops, most items on disk', () => {
    const queues = [new SpillingQueue<string>(spill, 3), new SpillingQueue<string>(spill, 3)];
    const models: string[][] = [[], []];
    let seed = 7;
    const random = (n: number) => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n;
    for (let step = 0; step < 20_000; step++) {
      const q = random(2);
      const [queue, model] = [queues[q], models[q]];
      const op = random(10);
      if (op < 5) {
        const item = `item-${step}`;
        queue.push(item);
        model.push(item);
      } else if (op < 8) expect(queue.shift()).toBe(model.shift());
      else if (op < 9) expect(queue.pop()).toBe(model.pop());
      else {
        queue.unshift(`front-${step}`);
        model.unshift(`front-${step}`);
      }
      expect(queue.length).toBe(model.length);
    }
  });

  it('holds at most two chunks a queue in memory: 10,000 items queued leave the rest in the file, emptied once read back', () => {
    const queue = new SpillingQueue<string>(spill, 100);
    for (let i = 0; i < 10_000; i++) queue.push(`http://a.test/p/${i}`);
    const inMemory = queue as unknown as { head: { length: number }; tail: unknown[] };
    expect(inMemory.head.length + inMemory.tail.length).toBeLessThanOrEqual(200);
    expect(statSync(spill.path).size).toBeGreaterThan(9_000 * 'http://a.test/p/1234'.length);
    for (let i = 0; i < 10_000; i++) expect(queue.shift()).toBe(`http://a.test/p/${i}`);
    expect(queue.shift()).toBeUndefined();
    expect(statSync(spill.path).size).toBe(0);
  });

  it('drops its spilled chunks when cleared', () => {
    const queue = new SpillingQueue<string>(spill, 2);
    for (let i = 0; i < 11; i++) queue.push(String(i));
    queue.clear();
    expect([queue.length, queue.shift(), statSync(spill.path).size]).toEqual([0, undefined, 0]);
    queue.push('again');
    expect(queue.shift()).toBe('again');
  });
});
