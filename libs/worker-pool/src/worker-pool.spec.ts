import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compiledWorkerScript, WorkerPool } from './worker-pool';

/** A worker script on the built serveWorkerCalls (npm test builds first): doubles, fails on 'bad', dies on 'die'. */
const SCRIPT = `
const { serveWorkerCalls } = require(${JSON.stringify(compiledWorkerScript(__dirname, 'worker-pool.js'))});
serveWorkerCalls((input) => {
  if (input === 'bad') throw new Error('bad input');
  if (input === 'die') process.exit(3);
  return { result: input * 2 };
});
`;

describe('WorkerPool', () => {
  let dir: string;
  let script: string;
  let pool: WorkerPool<unknown, number> | undefined;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'worker-pool-'));
    script = join(dir, 'double.js');
    writeFileSync(script, SCRIPT);
  });
  afterEach(() => pool?.close());
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers every call, spread over its threads', async () => {
    pool = new WorkerPool('double', script, 2, undefined);
    expect(await Promise.all([1, 2, 3, 4, 5].map((n) => pool!.run(n)))).toEqual([2, 4, 6, 8, 10]);
  });

  it("rejects a call whose handler threw, with the pool's name and the reason, and goes on", async () => {
    pool = new WorkerPool('double', script, 1, undefined);
    await expect(pool.run('bad')).rejects.toThrow('double thread: bad input');
    expect(await pool.run(21)).toBe(42);
  });

  it('fails the calls of a thread that died and replaces the thread', async () => {
    pool = new WorkerPool('double', script, 1, undefined);
    await expect(pool.run('die')).rejects.toThrow('double thread exited with 3');
    expect(await pool.run(4)).toBe(8);
  });

  it('refuses calls once closed', async () => {
    const closed = new WorkerPool<unknown, number>('double', script, 1, undefined);
    await closed.close();
    await expect(closed.run(1)).rejects.toThrow('double threads are closed');
  });
});
