import { closeSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';
import { Deque } from './deque';

/** Where a spilled chunk of a queue is in the spill file. */
interface Chunk {
  start: number;
  length: number;
}

/**
 * The file the embedded frontier's queues spill to: chunks of queued items, as JSON, appended. Emptied (truncated)
 * whenever no chunk is left in it, so it holds about what is queued beyond the queues' memory, not all ever queued.
 */
export class SpillFile {
  private readonly fd: number;
  private end = 0;
  /** Chunks written and not read back yet. */
  private live = 0;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'w+');
  }

  write(items: readonly unknown[]): Chunk {
    const bytes = Buffer.from(JSON.stringify(items));
    for (let written = 0; written < bytes.length; ) written += writeSync(this.fd, bytes, written, bytes.length - written, this.end + written);
    const chunk = { start: this.end, length: bytes.length };
    this.end += bytes.length;
    this.live++;
    return chunk;
  }

  /** The chunk's items; it is then gone from the file. */
  take<T>(chunk: Chunk): T[] {
    const bytes = Buffer.allocUnsafe(chunk.length);
    for (let read = 0; read < chunk.length; ) read += readSync(this.fd, bytes, read, chunk.length - read, chunk.start + read);
    this.drop();
    return JSON.parse(bytes.toString('utf8'));
  }

  /** A chunk no longer wanted (its queue was emptied). */
  drop(): void {
    if (--this.live > 0) return;
    ftruncateSync(this.fd, 0);
    this.end = 0;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/**
 * A FIFO queue (with unshift, and pop for pruning) that keeps at most about 2 × `chunkItems` items in memory:
 * the oldest (taken next) and the newest (a chunk being filled). Everything between is in the spill file, in
 * chunks of `chunkItems`, read back one chunk at a time as the memory head runs out. Without a spill file,
 * every item stays in memory.
 */
export class SpillingQueue<T> {
  private readonly head = new Deque<T>();
  private readonly chunks = new Deque<Chunk>();
  private tail: T[] = [];
  private count = 0;

  constructor(
    private readonly spill: SpillFile | undefined,
    private readonly chunkItems: number,
  ) {}

  get length(): number {
    return this.count;
  }

  push(item: T): void {
    this.count++;
    if (!this.spill || (this.chunks.length === 0 && this.tail.length === 0 && this.head.length < this.chunkItems)) {
      this.head.push(item);
      return;
    }
    this.tail.push(item);
    if (this.tail.length >= this.chunkItems) {
      this.chunks.push(this.spill.write(this.tail));
      this.tail = [];
    }
  }

  unshift(item: T): void {
    this.count++;
    this.head.unshift(item);
  }

  shift(): T | undefined {
    if (this.count === 0) return undefined;
    if (this.head.length === 0) {
      const chunk = this.chunks.shift();
      for (const item of chunk ? this.spill!.take<T>(chunk) : this.tail.splice(0)) this.head.push(item);
    }
    this.count--;
    return this.head.shift();
  }

  /** The newest item. */
  pop(): T | undefined {
    if (this.count === 0) return undefined;
    this.count--;
    if (this.tail.length > 0) return this.tail.pop();
    const chunk = this.chunks.pop();
    if (chunk) {
      this.tail = this.spill!.take<T>(chunk);
      return this.tail.pop();
    }
    return this.head.pop();
  }

  /** Empties the queue, its spilled chunks too. */
  clear(): void {
    while (this.chunks.shift()) this.spill!.drop();
    while (this.head.shift() !== undefined);
    this.tail = [];
    this.count = 0;
  }
}
