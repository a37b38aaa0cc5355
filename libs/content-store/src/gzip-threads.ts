import { compiledWorkerScript, WorkerPool } from '@crawler/worker-pool';

/**
 * gzip on worker threads. zlib's own asynchronous API does the deflating on libuv's pool, but sets up and
 * tears down a compressor per call on the event loop, which cost about as much as compressing; a thread
 * that compresses synchronously, page after page, does neither on the event loop.
 */
export class GzipThreads {
  private readonly pool: WorkerPool<Buffer, Uint8Array>;

  constructor(size: number, level: number) {
    this.pool = new WorkerPool('gzip', compiledWorkerScript(__dirname, 'gzip.worker.js'), size, level);
  }

  async gzip(body: Buffer): Promise<Buffer> {
    const gzipped = await this.pool.run(body);
    return Buffer.from(gzipped.buffer, gzipped.byteOffset, gzipped.byteLength);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
