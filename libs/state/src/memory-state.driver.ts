import type { StateStore } from './state-store';
import { assertBitOffset } from './bit-offset';

export interface MemoryStateStoreOptions {
  /** Keys are stored as `${prefix}:${key}`, as in Redis. @defaultValue none (keys as given) */
  prefix?: string;
}

type Entry =
  | { type: 'string'; value: string; expiresAt?: number }
  | { type: 'hash'; value: Map<string, string>; expiresAt?: number }
  | { type: 'set'; value: Set<string> }
  | { type: 'list'; value: string[] }
  | { type: 'bits'; value: Uint8Array };
type Value<T extends Entry['type']> = Extract<Entry, { type: T }>['value'];

/** How often keys past their expiry are looked for and dropped (a write with an expiry sets it off). */
export const MEMORY_EXPIRY_SWEEP_MS = 1000;
const MAX_BITMAP_BYTES = 2 ** 29;

/** One keyspace, like a Redis database: a key holds one type; namespace views share it. */
class Keyspace {
  readonly entries = new Map<string, Entry>();
  /** Queues marked active (see `queuePush`). */
  readonly active = new Set<string>();
  /**
   * The keys that expire, and when. Checked on read alone, a key written once and never read again (a
   * downloader's lease claim) would stay for ever: one key a page. So, as Redis does, they are also swept.
   */
  private readonly expiring = new Map<string, number>();
  private sweptAt = 0;

  find<T extends Entry['type']>(key: string, type: T): Extract<Entry, { type: T }> | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    // Expiry is checked on read: an expired key is simply gone.
    if ((entry.type === 'string' || entry.type === 'hash') && entry.expiresAt !== undefined && entry.expiresAt <= Date.now()) {
      this.delete(key);
      return undefined;
    }
    if (entry.type !== type) throw new Error(`WRONGTYPE ${key} holds a ${entry.type}, not a ${type}`);
    return entry as Extract<Entry, { type: T }>;
  }

  setString(key: string, value: string, expiresAt: number | undefined): void {
    this.entries.set(key, { type: 'string', value, expiresAt });
    if (expiresAt === undefined) {
      this.expiring.delete(key);
      return;
    }
    this.expiring.set(key, expiresAt);
    this.sweep(Date.now());
  }

  /** A hash's expiry pushed to `expiresAt` at least (never brought forward). */
  expireHashAtLeast(key: string, expiresAt: number): void {
    const entry = this.entries.get(key);
    if (entry?.type !== 'hash' || (entry.expiresAt ?? 0) >= expiresAt) return;
    entry.expiresAt = expiresAt;
    this.expiring.set(key, expiresAt);
    this.sweep(Date.now());
  }

  delete(key: string): void {
    this.entries.delete(key);
    this.expiring.delete(key);
  }

  /** Drops the keys past their expiry, at most once per MEMORY_EXPIRY_SWEEP_MS: a pass costs one look per expiring key. */
  private sweep(now: number): void {
    if (now - this.sweptAt < MEMORY_EXPIRY_SWEEP_MS) return;
    this.sweptAt = now;
    for (const [key, expiresAt] of this.expiring) if (expiresAt <= now) this.delete(key);
  }

  /** The key's value, created empty when absent. */
  upsert<T extends 'hash' | 'set' | 'list'>(key: string, type: T, empty: () => Value<T>): Value<T> {
    const found = this.find(key, type) as { value: Value<T> } | undefined;
    if (found) return found.value;
    const value = empty();
    this.entries.set(key, { type, value } as Entry);
    return value;
  }
}

/** The embedded driver. Every method runs synchronously inside its promise, so compound ops are atomic. */
export class MemoryStateStore implements StateStore {
  private keyspace = new Keyspace();
  private readonly keyPrefix: string;

  constructor(options: MemoryStateStoreOptions = {}) {
    this.keyPrefix = options.prefix ? `${options.prefix}:` : '';
  }

  namespace(prefix: string): StateStore {
    if (!prefix) throw new Error('namespace needs a non-empty prefix');
    const view = new MemoryStateStore({ prefix: `${this.keyPrefix}${prefix}` });
    view.keyspace = this.keyspace;
    return view;
  }

  async get(key: string): Promise<string | null> {
    return this.keyspace.find(this.key(key), 'string')?.value ?? null;
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    this.keyspace.setString(this.key(key), value, ttlMs === undefined ? undefined : Date.now() + ttlMs);
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    // No await between the test and the set: atomic, as in Redis.
    if (this.keyspace.find(this.key(key), 'string')) return false;
    this.keyspace.setString(this.key(key), value, Date.now() + ttlMs);
    return true;
  }

  async del(key: string): Promise<void> {
    this.keyspace.delete(this.key(key));
    this.keyspace.active.delete(this.key(key));
  }

  async delMany(keys: readonly string[]): Promise<void> {
    for (const key of keys) await this.del(key);
  }

  async incr(key: string, by = 1): Promise<number> {
    const entry = this.keyspace.find(this.key(key), 'string');
    const next = parseInteger(entry?.value ?? '0') + by;
    // Like INCRBY, the key keeps its expiry.
    this.keyspace.setString(this.key(key), String(next), entry?.expiresAt);
    return next;
  }

  async hashIncr(key: string, field: string, by = 1): Promise<number> {
    const hash = this.keyspace.upsert(this.key(key), 'hash', () => new Map());
    const next = parseInteger(hash.get(field) ?? '0') + by;
    hash.set(field, String(next));
    return next;
  }

  async hashIncrEach(key: string, fields: string[]): Promise<number[]> {
    const hash = this.keyspace.upsert(this.key(key), 'hash', () => new Map());
    return fields.map((field) => {
      const next = parseInteger(hash.get(field) ?? '0') + 1;
      hash.set(field, String(next));
      return next;
    });
  }

  async hashIncrMany(key: string, amounts: ReadonlyMap<string, number>): Promise<number[]> {
    if (amounts.size === 0) return [];
    const hash = this.keyspace.upsert(this.key(key), 'hash', () => new Map());
    const after: number[] = [];
    for (const [field, by] of amounts) {
      const next = parseInteger(hash.get(field) ?? '0') + by;
      hash.set(field, String(next));
      after.push(next);
    }
    return after;
  }

  async hashSet(key: string, field: string, value: string): Promise<void> {
    this.keyspace.upsert(this.key(key), 'hash', () => new Map()).set(field, value);
  }

  async hashSetMany(key: string, values: ReadonlyMap<string, string>): Promise<void> {
    if (values.size === 0) return;
    const hash = this.keyspace.upsert(this.key(key), 'hash', () => new Map());
    for (const [field, value] of values) hash.set(field, value);
  }

  async hashGet(key: string, field: string): Promise<string | null> {
    return this.keyspace.find(this.key(key), 'hash')?.value.get(field) ?? null;
  }

  async hashSetIfAbsent(key: string, field: string, value: string): Promise<string | null> {
    const hash = this.keyspace.upsert(this.key(key), 'hash', () => new Map());
    const existing = hash.get(field);
    if (existing !== undefined) return existing;
    hash.set(field, value);
    return null;
  }

  async hashGetAll(key: string): Promise<Record<string, string>> {
    return Object.fromEntries(this.keyspace.find(this.key(key), 'hash')?.value ?? []);
  }

  async hashSetBounded(key: string, field: string, value: string, maxFields: number, ttlMs: number): Promise<boolean> {
    const hash = this.keyspace.upsert(this.key(key), 'hash', () => new Map());
    if (!hash.has(field) && hash.size >= maxFields) return false;
    hash.set(field, value);
    this.keyspace.expireHashAtLeast(this.key(key), Date.now() + ttlMs);
    return true;
  }

  async hashDelete(key: string, fields: string[]): Promise<void> {
    const hash = this.keyspace.find(this.key(key), 'hash')?.value;
    if (!hash) return;
    for (const field of fields) hash.delete(field);
    // Redis drops empty hashes; so do we.
    if (hash.size === 0) this.keyspace.delete(this.key(key));
  }

  async setAdd(key: string, members: string[]): Promise<boolean[]> {
    if (members.length === 0) return [];
    const set = this.keyspace.upsert(this.key(key), 'set', () => new Set());
    return members.map((member) => {
      if (set.has(member)) return false;
      set.add(member);
      return true;
    });
  }

  async setHas(key: string, member: string): Promise<boolean> {
    return this.keyspace.find(this.key(key), 'set')?.value.has(member) ?? false;
  }

  async setRemove(key: string, member: string | readonly string[]): Promise<number> {
    const set = this.keyspace.find(this.key(key), 'set')?.value;
    if (!set) return 0;
    for (const m of typeof member === 'string' ? [member] : member) set.delete(m);
    if (set.size === 0) this.keyspace.delete(this.key(key));
    return set.size;
  }

  async setMembers(key: string): Promise<string[]> {
    return [...(this.keyspace.find(this.key(key), 'set')?.value ?? [])];
  }

  async setMembersMany(keys: string[]): Promise<string[][]> {
    return keys.map((key) => [...(this.keyspace.find(this.key(key), 'set')?.value ?? [])]);
  }

  async setAddMany(entries: [key: string, member: string][]): Promise<boolean[]> {
    return entries.map(([key, member]) => {
      const set = this.keyspace.upsert(this.key(key), 'set', () => new Set());
      if (set.has(member)) return false;
      set.add(member);
      return true;
    });
  }

  async queuePush(key: string, items: string[], front = false): Promise<boolean> {
    if (items.length === 0) return false;
    const k = this.key(key);
    const list = this.keyspace.upsert(k, 'list', () => []);
    if (front) list.unshift(...items);
    else for (const item of items) list.push(item);
    if (this.keyspace.active.has(k)) return false;
    this.keyspace.active.add(k);
    return true;
  }

  async queueHeadOrIdle(key: string): Promise<string | null> {
    const k = this.key(key);
    const head = this.keyspace.find(k, 'list')?.value[0];
    if (head !== undefined) return head;
    this.keyspace.active.delete(k);
    return null;
  }

  async queueRemoveHead(key: string, item: string): Promise<boolean> {
    const k = this.key(key);
    const list = this.keyspace.find(k, 'list')?.value;
    if (!list || list[0] !== item) return false;
    list.shift();
    // Redis drops empty lists; so do we, so `clear` and type checks agree across drivers.
    if (list.length === 0) this.keyspace.delete(k);
    return true;
  }

  async queueLength(key: string): Promise<number> {
    return this.keyspace.find(this.key(key), 'list')?.value.length ?? 0;
  }

  async listPushCapped(key: string, items: string[], max: number): Promise<void> {
    if (items.length === 0) return;
    const list = this.keyspace.upsert(this.key(key), 'list', () => []);
    list.unshift(...[...items].reverse());
    list.splice(Math.max(0, max));
  }

  async listHead(key: string, count: number): Promise<string[]> {
    return (this.keyspace.find(this.key(key), 'list')?.value ?? []).slice(0, Math.max(0, count));
  }

  async bitsTestAndSet(key: string, groups: number[][]): Promise<boolean[]> {
    for (const offset of groups.flat()) assertBitOffset(offset);
    const k = this.key(key);
    let bytes = this.keyspace.find(k, 'bits')?.value ?? new Uint8Array(0);
    const answers = groups.map((offsets) => {
      let all = true;
      for (const offset of offsets) {
        const index = Math.floor(offset / 8);
        if (index >= bytes.length) bytes = grow(bytes, index + 1);
        const mask = 0x80 >> (offset % 8); // Redis order: bit 0 is the most significant bit of byte 0.
        if ((bytes[index] & mask) === 0) all = false;
        bytes[index] |= mask;
      }
      return all;
    });
    if (bytes.length > 0) this.keyspace.entries.set(k, { type: 'bits', value: bytes });
    return answers;
  }

  async bitCount(key: string): Promise<number> {
    const bytes = this.keyspace.find(this.key(key), 'bits')?.value ?? new Uint8Array(0);
    // Four bytes at a time where the buffer allows (a 10M-URL filter is 18 MB: the gauge reads it often).
    const aligned = bytes.byteOffset % 4 === 0 ? Math.floor(bytes.length / 4) : 0;
    const words = new Uint32Array(bytes.buffer, bytes.byteOffset, aligned);
    let count = 0;
    for (let i = 0; i < words.length; i++) {
      let x = words[i];
      if (x === 0) continue;
      x -= (x >>> 1) & 0x55555555;
      x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
      count += Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
    }
    for (let i = aligned * 4; i < bytes.length; i++) {
      for (let byte = bytes[i]; byte; byte &= byte - 1) count++;
    }
    return count;
  }

  async clear(): Promise<void> {
    const { entries, active } = this.keyspace;
    for (const key of entries.keys()) if (key.startsWith(this.keyPrefix)) this.keyspace.delete(key);
    for (const key of active) if (key.startsWith(this.keyPrefix)) active.delete(key);
  }

  async close(): Promise<void> {}

  /** Keys held, in every namespace (expired ones linger until read or swept): what this store's memory grows with. */
  keyCount(): number {
    return this.keyspace.entries.size;
  }

  private key(key: string): string {
    return `${this.keyPrefix}${key}`;
  }
}

function parseInteger(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || value.trim() !== value || value === '') {
    throw new Error('ERR value is not an integer or out of range');
  }
  return n;
}

/** Doubles capacity (amortised O(1) growth), as a Bloom filter's bitmap is written all over at first. */
function grow(bytes: Uint8Array, minLength: number): Uint8Array {
  const grown = new Uint8Array(Math.min(Math.max(minLength, bytes.length * 2), MAX_BITMAP_BYTES));
  grown.set(bytes);
  return grown;
}
