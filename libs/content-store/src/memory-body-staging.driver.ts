import type { BodyStaging, StagedBody } from './body-staging';
import type { Compression } from './codec';
import { Compressor } from './compressor';

/** Bodies kept in this process's memory until released: the embedded crawl's claim check. */
export class MemoryBodyStaging implements BodyStaging {
  private readonly bodies = new Map<string, Buffer>();
  private next = 0;
  private readonly compressor: Compressor;

  /** `compression`: how `compressed()` compresses (as pages are stored); `threads`: threads it compresses on (0: zlib's own async API). */
  constructor(compression: Compression = { codec: 'gzip', level: 6 }, threads = 0) {
    this.compressor = new Compressor(compression, threads);
  }

  async stage(body: Buffer): Promise<string> {
    const ref = `staging/${(this.next++).toString(36)}`;
    this.bodies.set(ref, body);
    return ref;
  }

  async read(ref: string): Promise<StagedBody | null> {
    const body = this.bodies.get(ref);
    if (!body) return null;
    return { body, compressed: () => this.compressor.compress(body) };
  }

  async release(ref: string): Promise<void> {
    this.bodies.delete(ref);
  }

  close(): Promise<void> {
    return this.compressor.close();
  }
}
