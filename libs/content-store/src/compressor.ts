import { type Compressed, type Compression, compressAsync } from './codec';
import { CompressionThreads } from './compression-threads';

/** How a staging driver compresses a body: on its own threads, started on the first body, or (0) with zlib's async API. */
export class Compressor {
  private threads?: CompressionThreads;

  constructor(
    private readonly compression: Compression,
    private readonly threadCount: number,
  ) {}

  async compress(body: Buffer): Promise<Compressed> {
    const bytes = this.threadCount === 0 ? await compressAsync(body, this.compression) : await this.started().compress(body);
    return { codec: this.compression.codec, bytes };
  }

  async close(): Promise<void> {
    await this.threads?.close();
  }

  private started(): CompressionThreads {
    this.threads ??= new CompressionThreads(this.threadCount, this.compression);
    return this.threads;
  }
}
