import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

/**
 * gzip on worker threads. zlib's own asynchronous API does the deflating on libuv's pool, but sets up and
 * tears down a compressor per call on the event loop, which cost about as much as compressing; a thread
 * that compresses synchronously, page after page, does neither on the event loop. A thread that dies fails
 * its pending bodies and is replaced.
 */
export class GzipThreads {
  private readonly threads: { worker: Worker; pending: Map<number, { resolve: (b: Buffer) => void; reject: (e: Error) => void }> }[] = [];
  private nextId = 1;
  private closed = false;

  constructor(
    size: number,
    private readonly level: number,
  ) {
    for (let i = 0; i < size; i++) this.threads.push(this.spawn());
  }

  gzip(body: Buffer): Promise<Buffer> {
    if (this.closed) return Promise.reject(new Error('gzip threads are closed'));
    const thread = this.threads.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      thread.worker.postMessage({ id, body });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.threads.map((t) => t.worker.terminate()));
  }

  private spawn() {
    const worker = new Worker(workerScript(), { workerData: this.level });
    const thread = { worker, pending: new Map<number, { resolve: (b: Buffer) => void; reject: (e: Error) => void }>() };
    worker.on('message', ({ id, gzipped }: { id: number; gzipped: Uint8Array }) => {
      thread.pending.get(id)?.resolve(Buffer.from(gzipped.buffer, gzipped.byteOffset, gzipped.byteLength));
      thread.pending.delete(id);
    });
    const fail = (error: Error) => {
      for (const p of thread.pending.values()) p.reject(error);
      thread.pending.clear();
      if (this.closed) return;
      const i = this.threads.indexOf(thread);
      if (i >= 0) this.threads[i] = this.spawn();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`gzip thread exited with ${code}`)));
    worker.unref();
    return thread;
  }
}

/** The compiled worker beside this file, or (running from sources, as under jest) its build in dist/. */
function workerScript(): string {
  const here = join(__dirname, 'gzip.worker.js');
  if (existsSync(here)) return here;
  return join(__dirname.replace(/([\\/])libs([\\/])content-store([\\/])src$/, '$1dist$1libs$2content-store$3src'), 'gzip.worker.js');
}
