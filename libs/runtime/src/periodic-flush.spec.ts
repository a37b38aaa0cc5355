import { PeriodicFlush } from './periodic-flush';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('PeriodicFlush', () => {
  it('writes on its timer until closed, then once more', async () => {
    let writes = 0;
    const flusher = new PeriodicFlush(async () => void writes++, 10);
    // Two ticks of a 10 ms timer; a loaded machine may run them late, so wait for them rather than a fixed time.
    const deadline = Date.now() + 5000;
    while (writes < 2 && Date.now() < deadline) await sleep(10);
    expect(writes).toBeGreaterThanOrEqual(2);
    await flusher.close();
    const closed = writes;
    await sleep(30);
    expect(writes).toBe(closed);
  });

  it('runs one write at a time, in order, a failed one rejecting only its own caller', async () => {
    const log: string[] = [];
    let n = 0;
    const flusher = new PeriodicFlush(async () => {
      const i = ++n;
      log.push(`start ${i}`);
      await sleep(5);
      log.push(`end ${i}`);
      if (i === 1) throw new Error('store down');
    }, 60_000);
    const first = flusher.flush();
    const second = flusher.flush();
    await expect(first).rejects.toThrow('store down');
    await second;
    expect(log).toEqual(['start 1', 'end 1', 'start 2', 'end 2']);
    await flusher.close();
  });

  it('keeps its timer from holding the process open', () => {
    const flusher = new PeriodicFlush(async () => undefined, 1000);
    const timer = (flusher as unknown as { timer: NodeJS.Timeout }).timer;
    expect(timer.hasRef()).toBe(false);
    return flusher.close();
  });
});
