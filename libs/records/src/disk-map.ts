import { closeSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';
import { murmur3_32 } from '@crawler/murmur3';

const FIRST_CAPACITY = 1024;
/** Lines are written out in blocks of this size: a write a page would cost more than the rest of the map. */
const WRITE_BUFFER_BYTES = 64 * 1024;
/** A slot of the index: the key's 32-bit hash, its line's length (0: an empty slot) and where the line starts. */
const SLOT_BYTES = 16;
/** Slots read at once while probing: at most half full, a probe rarely runs past a few. */
const PROBE_SLOTS = 8;

/**
 * A string-keyed map that lives in two files, for the records that grow with every page of a crawl that has
 * no database. Each `set` appends one JSON line, `[key, value]`, to the map's file; an index file beside it
 * (`<file>.index`) is an open-addressing table of 16-byte slots (the key's hash, where its line starts and how
 * long it is), at most half full. Nothing grows in memory with the keys: a read probes the index with a few
 * positioned reads, which the page cache answers, follows the hash to the line and checks its key, so two
 * keys of one hash are told apart and every answer is exact. A key set again gets a new line (the old one
 * stays in the file, unreferenced). Lines are written in 64 KiB blocks, and read from the block still in
 * memory until it is written. When the table is half full it is rebuilt twice as large, in memory for that
 * moment (16 bytes a slot), then written back whole. The files are the map's and only while it is open:
 * opening truncates them, as a memory map starts empty; closing writes out the last block.
 */
export class DiskMap<V> {
  private readonly fd: number;
  private readonly indexFd: number;
  /** Bytes appended (the last `buffered` of them still in `buffer`). */
  private end = 0;
  private readonly buffer = Buffer.allocUnsafe(WRITE_BUFFER_BYTES);
  private buffered = 0;
  private capacity = FIRST_CAPACITY;
  private keys = 0;
  private readonly probe = Buffer.allocUnsafe(PROBE_SLOTS * SLOT_BYTES);
  private readonly slot = Buffer.allocUnsafe(SLOT_BYTES);
  /** What the last `find` found: the slot, and its line's start and length (0: the slot is empty). */
  private foundSlot = 0;
  private foundStart = 0;
  private foundLength = 0;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'w+');
    this.indexFd = openSync(`${path}.index`, 'w+');
    ftruncateSync(this.indexFd, this.capacity * SLOT_BYTES);
  }

  get size(): number {
    return this.keys;
  }

  get(key: string): V | undefined {
    this.find(key, murmur3_32(key));
    return this.foundLength === 0 ? undefined : (this.read(this.foundStart, this.foundLength)[1] as V);
  }

  set(key: string, value: V): void {
    const hash = murmur3_32(key);
    this.find(key, hash);
    const added = this.foundLength === 0;
    const slot = this.foundSlot;
    const start = this.end;
    const length = this.append(key, value);
    this.slot.writeUInt32LE(hash, 0);
    this.slot.writeUInt32LE(length, 4);
    this.slot.writeDoubleLE(start, 8);
    writeFully(this.indexFd, this.slot, slot * SLOT_BYTES);
    if (added && ++this.keys * 2 > this.capacity) this.rehash(this.capacity * 2);
  }

  close(): void {
    this.flush();
    closeSync(this.fd);
    closeSync(this.indexFd);
  }

  /** Finds the slot holding the key, or the empty slot where it would go (foundSlot, foundStart, foundLength). */
  private find(key: string, hash: number): void {
    const mask = this.capacity - 1;
    let slot = hash & mask;
    for (;;) {
      // Up to the end of the table at most: a probe that runs off it goes on from slot 0.
      const count = Math.min(PROBE_SLOTS, this.capacity - slot);
      readFully(this.indexFd, this.probe, count * SLOT_BYTES, slot * SLOT_BYTES);
      for (let i = 0; i < count; i++, slot++) {
        const at = i * SLOT_BYTES;
        const length = this.probe.readUInt32LE(at + 4);
        const start = this.probe.readDoubleLE(at + 8);
        if (length === 0 || (this.probe.readUInt32LE(at) === hash && this.read(start, length)[0] === key)) {
          this.foundSlot = slot;
          this.foundStart = start;
          this.foundLength = length;
          return;
        }
      }
      slot &= mask;
    }
  }

  /** Appends the key's line; answers its length in bytes. */
  private append(key: string, value: V): number {
    const text = `${JSON.stringify([key, value])}\n`;
    const length = Buffer.byteLength(text);
    if (this.buffered + length > this.buffer.length) this.flush();
    if (length > this.buffer.length) writeFully(this.fd, Buffer.from(text), this.end);
    else this.buffered += this.buffer.write(text, this.buffered);
    this.end += length;
    return length;
  }

  private flush(): void {
    writeFully(this.fd, this.buffer.subarray(0, this.buffered), this.end - this.buffered);
    this.buffered = 0;
  }

  private read(start: number, length: number): [string, unknown] {
    const unwritten = this.end - this.buffered;
    if (start >= unwritten) return JSON.parse(this.buffer.toString('utf8', start - unwritten, start - unwritten + length));
    const bytes = Buffer.allocUnsafe(length);
    readFully(this.fd, bytes, length, start);
    return JSON.parse(bytes.toString('utf8'));
  }

  /** A table twice as large, filled from the slots' hashes: no line is read again. */
  private rehash(capacity: number): void {
    const old = Buffer.allocUnsafe(this.capacity * SLOT_BYTES);
    readFully(this.indexFd, old, old.length, 0);
    const table = Buffer.alloc(capacity * SLOT_BYTES);
    const mask = capacity - 1;
    for (let at = 0; at < old.length; at += SLOT_BYTES) {
      if (old.readUInt32LE(at + 4) === 0) continue;
      let slot = old.readUInt32LE(at) & mask;
      while (table.readUInt32LE(slot * SLOT_BYTES + 4) !== 0) slot = (slot + 1) & mask;
      old.copy(table, slot * SLOT_BYTES, at, at + SLOT_BYTES);
    }
    writeFully(this.indexFd, table, 0);
    this.capacity = capacity;
  }
}

function writeFully(fd: number, bytes: Buffer, position: number): void {
  for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written, bytes.length - written, position + written);
}

function readFully(fd: number, bytes: Buffer, length: number, position: number): void {
  for (let read = 0; read < length; ) {
    const n = readSync(fd, bytes, read, length - read, position + read);
    if (n === 0) throw new Error(`DiskMap: read past the end of its file at ${position + read}`);
    read += n;
  }
}
