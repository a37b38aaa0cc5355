import { existsSync } from 'node:fs';
import { join, sep } from 'node:path';
import { parentPort, Worker } from 'node:worker_threads';

interface Pending<Out> {
  resolve: (result: Out) => void;
  reject: (error: Error) => void;
}

interface Thread<Out> {
  worker: Worker;
  pending: Map<number, Pending<Out>>;
}

/**
 * A fixed set of worker threads running one script, for CPU work that would otherwise hold up a process's
 * event loop (parsing, compressing). Each call goes to the thread with the fewest calls waiting. A thread
 * that dies fails its pending calls (their messages are retried upstream) and is replaced. The script
 * answers with `serveWorkerCalls`.
 */
export class WorkerPool<In, Out> {
  private readonly threads: Thread<Out>[] = [];
  private nextId = 1;
  private closed = false;

  constructor(
    /** What the threads do, in errors: "parse", "gzip". */
    private readonly name: string,
    private readonly script: string,
    size: number,
    private readonly workerData: unknown,
  ) {
    for (let i = 0; i < size; i++) this.threads.push(this.spawn());
  }

  run(input: In): Promise<Out> {
    if (this.closed) return Promise.reject(new Error(`${this.name} threads are closed`));
    const thread = this.threads.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      thread.worker.postMessage({ id, input });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.threads.map((t) => t.worker.terminate()));
  }

  private spawn(): Thread<Out> {
    const worker = new Worker(this.script, { workerData: this.workerData });
    const thread: Thread<Out> = { worker, pending: new Map() };
    worker.on('message', ({ id, result, error }: { id: number; result?: Out; error?: string }) => {
      const pending = thread.pending.get(id);
      thread.pending.delete(id);
      if (error !== undefined) pending?.reject(new Error(`${this.name} thread: ${error}`));
      else pending?.resolve(result as Out);
    });
    const fail = (error: Error) => {
      for (const p of thread.pending.values()) p.reject(error);
      thread.pending.clear();
      if (this.closed) return;
      const i = this.threads.indexOf(thread);
      if (i >= 0) this.threads[i] = this.spawn();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`${this.name} thread exited with ${code}`)));
    // Idle threads must not keep the process alive.
    worker.unref();
    return thread;
  }
}

/**
 * The worker side: answers each call with `handle`'s result, or with its error's message. `handle` may
 * name buffers of its result to move rather than copy.
 */
export function serveWorkerCalls<In, Out>(handle: (input: In) => { result: Out; transfer?: ArrayBuffer[] }): void {
  parentPort!.on('message', ({ id, input }: { id: number; input: In }) => {
    try {
      const { result, transfer } = handle(input);
      parentPort!.postMessage({ id, result }, transfer ?? []);
    } catch (error) {
      parentPort!.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
    }
  });
}

/**
 * A worker script's compiled file: beside the caller's module when running from dist/, or (running from
 * sources, as under jest) its build in dist/.
 */
export function compiledWorkerScript(dirname: string, file: string): string {
  const here = join(dirname, file);
  if (existsSync(here)) return here;
  const libs = `${sep}libs${sep}`;
  const at = dirname.lastIndexOf(libs);
  return join(dirname.slice(0, at), 'dist', dirname.slice(at + 1), file);
}
