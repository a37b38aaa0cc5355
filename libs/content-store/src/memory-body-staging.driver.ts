import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { BodyStaging, StagedBody } from './body-staging';
import { GzipThreads } from './gzip-threads';

const gzipAsync = promisify(gzip);

/** Bodies kept in this process's memory until released: the embedded crawl's claim check. */
export class MemoryBodyStaging implements BodyStaging {
  private readonly bodies = new Map<string, Buffer>();
  private next = 0;
  private threads?: GzipThreads;

  /** `gzipLevel`: how `gzipped()` compresses (stored pages' level); `gzipThreads`: threads it compresses on (0: zlib's own async API). */
  constructor(
    private readonly gzipLevel = 6,
    private readonly gzipThreads = 0,
  ) {}

  async stage(body: Buffer): Promise<string> {
    const ref = `staging/${(this.next++).toString(36)}`;
    this.bodies.set(ref, body);
    return ref;
  }

  async read(ref: string): Promise<StagedBody | null> {
    const body = this.bodies.get(ref);
    if (!body) return null;
    return { body, gzipped: () => this.gzip(body) };
  }

  async release(ref: string): Promise<void> {
    this.bodies.delete(ref);
  }

  async close(): Promise<void> {
    await this.threads?.close();
  }

  private gzip(body: Buffer): Promise<Buffer> {
    if (this.gzipThreads === 0) return gzipAsync(body, { level: this.gzipLevel });
    this.threads ??= new GzipThreads(this.gzipThreads, this.gzipLevel);
    return this.threads.gzip(body);
  }
}
