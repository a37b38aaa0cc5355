import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { murmur3_32 } from '@crawler/murmur3';

const EMPTY = -1;
const FIRST_CAPACITY = 1024;
/** Lines are written out in blocks of this size: a write a page would cost more than the rest of the map. */
const WRITE_BUFFER_BYTES = 64 * 1024;

/**
 * A string-keyed map whose values live in a file, for the records that grow with every page of a crawl that
 * has no database. Each `set` appends one JSON line, `[key, value]`; memory keeps only where each line starts
 * (8 bytes a line) and an open-addressing table of the keys' 32-bit hashes (8 bytes a slot, at most half
 * full): 24–40 bytes a key, whatever the key and value weigh. A read follows the hash to the line and checks
 * its key, so two keys of one hash are told apart and every answer is exact. A key set again gets a new line
 * (the old one stays in the file, unreferenced). Lines are written in 64 KiB blocks, and read from the block
 * still in memory until it is written. The file is the map's and only while it is open: opening truncates it,
 * as a memory map starts empty; closing writes out the last block.
 */
export class DiskMap<V> {
  private readonly fd: number;
  /** Bytes appended (the last `buffered` of them still in `buffer`). */
  private end = 0;
  private readonly buffer = Buffer.allocUnsafe(WRITE_BUFFER_BYTES);
  private buffered = 0;
  /** Where each line starts; a line ends where the next one starts. */
  private starts = new Float64Array(FIRST_CAPACITY);
  private lines = 0;
  /** Per slot, the line of its key (EMPTY: none) and the key's hash. */
  private slots = new Int32Array(FIRST_CAPACITY * 2).fill(EMPTY);
  private hashes = new Uint32Array(FIRST_CAPACITY * 2);
  private keys = 0;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'w+');
  }

  get size(): number {
    return this.keys;
  }

  get(key: string): V | undefined {
    const line = this.slots[this.find(key, murmur3_32(key))];
    return line === EMPTY ? undefined : (this.read(line)[1] as V);
  }

  set(key: string, value: V): void {
    const hash = murmur3_32(key);
    const slot = this.find(key, hash);
    if (this.slots[slot] === EMPTY) {
      this.hashes[slot] = hash;
      this.keys++;
    }
    this.slots[slot] = this.append(key, value);
    if (this.keys * 2 > this.slots.length) this.rehash(this.slots.length * 2);
  }

  close(): void {
    this.flush();
    closeSync(this.fd);
  }

  /** The slot holding the key, or the empty slot where it would go. */
  private find(key: string, hash: number): number {
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const line = this.slots[slot];
      if (line === EMPTY || (this.hashes[slot] === hash && this.read(line)[0] === key)) return slot;
    }
  }

  private append(key: string, value: V): number {
    const text = `${JSON.stringify([key, value])}\n`;
    const length = Buffer.byteLength(text);
    if (this.buffered + length > this.buffer.length) this.flush();
    if (length > this.buffer.length) this.writeAt(Buffer.from(text), this.end);
    else this.buffered += this.buffer.write(text, this.buffered);
    if (this.lines === this.starts.length) {
      const grown = new Float64Array(this.starts.length * 2);
      grown.set(this.starts);
      this.starts = grown;
    }
    this.starts[this.lines] = this.end;
    this.end += length;
    return this.lines++;
  }

  private flush(): void {
    this.writeAt(this.buffer.subarray(0, this.buffered), this.end - this.buffered);
    this.buffered = 0;
  }

  private writeAt(bytes: Buffer, position: number): void {
    for (let written = 0; written < bytes.length; ) written += writeSync(this.fd, bytes, written, bytes.length - written, position + written);
  }

  private read(line: number): [string, unknown] {
    const start = this.starts[line];
    const length = (line + 1 < this.lines ? this.starts[line + 1] : this.end) - start;
    const unwritten = this.end - this.buffered;
    if (start >= unwritten) return JSON.parse(this.buffer.toString('utf8', start - unwritten, start - unwritten + length));
    const bytes = Buffer.allocUnsafe(length);
    for (let read = 0; read < length; ) read += readSync(this.fd, bytes, read, length - read, start + read);
    return JSON.parse(bytes.toString('utf8'));
  }

  /** A table twice as large, filled from the kept hashes: no line is read again. */
  private rehash(capacity: number): void {
    const { slots, hashes } = this;
    this.slots = new Int32Array(capacity).fill(EMPTY);
    this.hashes = new Uint32Array(capacity);
    const mask = capacity - 1;
    for (let old = 0; old < slots.length; old++) {
      if (slots[old] === EMPTY) continue;
      let slot = hashes[old] & mask;
      while (this.slots[slot] !== EMPTY) slot = (slot + 1) & mask;
      this.slots[slot] = slots[old];
      this.hashes[slot] = hashes[old];
    }
  }
}
