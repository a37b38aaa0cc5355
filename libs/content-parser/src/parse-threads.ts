import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { FetchedPage } from '@crawler/contracts';
import type { ParsePageOptions, ParseResult } from './parse-page';

interface Pending {
  resolve: (result: ParseResult) => void;
  reject: (error: Error) => void;
}

interface Thread {
  worker: Worker;
  pending: Map<number, Pending>;
}

/**
 * Parsing in worker threads, so that a process with spare cores parses on them while its event loop
 * fetches, stores and routes (the embedded crawl: one process, every stage). Each page goes to the thread
 * with the fewest pages waiting; its body is copied, not moved (the staged body stays readable). A thread
 * that dies fails its pending pages (their messages are retried) and is replaced.
 */
export class ParseThreads {
  private readonly threads: Thread[] = [];
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly size: number,
    private readonly options: ParsePageOptions,
  ) {
    for (let i = 0; i < size; i++) this.threads.push(this.spawn());
  }

  parse(fetched: FetchedPage, body: Buffer): Promise<ParseResult> {
    if (this.closed) return Promise.reject(new Error('parse threads are closed'));
    const thread = this.threads.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      thread.worker.postMessage({ id, fetched, body });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.threads.map((t) => t.worker.terminate()));
  }

  private spawn(): Thread {
    const worker = new Worker(workerScript(), { workerData: this.options });
    const thread: Thread = { worker, pending: new Map() };
    worker.on('message', ({ id, result, error }: { id: number; result?: ParseResult; error?: string }) => {
      const pending = thread.pending.get(id);
      thread.pending.delete(id);
      if (error !== undefined) pending?.reject(new Error(`parse thread: ${error}`));
      else pending?.resolve(result!);
    });
    const fail = (error: Error) => {
      for (const p of thread.pending.values()) p.reject(error);
      thread.pending.clear();
      if (this.closed) return;
      const i = this.threads.indexOf(thread);
      if (i >= 0) this.threads[i] = this.spawn();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`parse thread exited with ${code}`)));
    // Idle threads must not keep the process alive.
    worker.unref();
    return thread;
  }
}

/** The compiled worker beside this file, or (running from sources, as under jest) its build in dist/. */
function workerScript(): string {
  const here = join(__dirname, 'parse.worker.js');
  if (existsSync(here)) return here;
  const built = __dirname.replace(/([\\/])libs([\\/])content-parser([\\/])src$/, '$1dist$1libs$2content-parser$3src');
  return join(built, 'parse.worker.js');
}
