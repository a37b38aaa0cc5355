import { compiledWorkerScript, WorkerPool } from '@crawler/worker-pool';
import type { Compression } from './codec';

/**
 * Compression on worker threads. zlib's own asynchronous API does the deflating on libuv's pool, but sets up
 * and tears down a compressor per call on the event loop, which cost about as much as compressing; a thread
 * that compresses synchronously, page after page, does neither on the event loop.
 */
export class CompressionThreads {
  private readonly pool: WorkerPool<Buffer, Uint8Array>;

  constructor(size: number, compression: Compression) {
    this.pool = new WorkerPool(compression.codec, compiledWorkerScript(__dirname, 'compression.worker.js'), size, compression);
  }

  async compress(body: Buffer): Promise<Buffer> {
    const compressed = await this.pool.run(body);
    return Buffer.from(compressed.buffer, compressed.byteOffset, compressed.byteLength);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
