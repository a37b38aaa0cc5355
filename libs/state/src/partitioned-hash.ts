import { groupBy, isClusterUrl } from '@crawler/redis';
import type { StateStore } from './state-store';

/**
 * Buckets of a hash that grows with the crawl (a field per page, URL or host), by where state lives:
 *
 * - one Redis node, or memory: 1, so the hash keeps its plain key and a crawl begun before it was
 *   partitioned resumes on its own data;
 * - a Redis Cluster: 1024. A key lives whole on one master, so the buckets are what spreads the hash. Their
 *   keys' slots are CRC16 of their names, i.e. random: over 30 masters 256 buckets (8.5 each on average)
 *   leave the busiest master with 2 to 2.6 times its share, 1024 (34 each) with 1.2 to 1.3 times. Each bucket
 *   then holds a thousandth of the hash (a million fields at a billion pages), small enough to move
 *   whole when slots are resharded. Reading every bucket (`getAll`) costs 1024 reads: only listings and
 *   tests do it.
 *
 * The one place the count is chosen: every reader and writer of a partitioned hash must agree on it.
 */
export function hashBucketsFor(redisUrl: string | undefined): number {
  return isClusterUrl(redisUrl) ? CLUSTER_HASH_BUCKETS : 1;
}

export const CLUSTER_HASH_BUCKETS = 1024;

/**
 * A hash split into `buckets` hashes by a stable hash of the field (FNV-1a, mod `buckets`): bucket b is the
 * key `<name>:<b>`, or `<name>` itself when there is one bucket. Every operation on a field touches only its
 * bucket, one key, so a Redis Cluster routes it to the master that holds it; operations on many fields make
 * one call per bucket, in parallel.
 *
 * Each call on one bucket is as atomic as the StateStore operation it makes; a call over many buckets is
 * atomic per bucket, not as a whole (a field's answer is still exact: a field lives in one bucket).
 */
export class PartitionedHash {
  constructor(
    private readonly store: StateStore,
    readonly name: string,
    readonly buckets: number,
  ) {
    if (!Number.isInteger(buckets) || buckets < 1) throw new Error(`PartitionedHash ${name}: buckets must be a whole number ≥ 1 (got ${buckets})`);
  }

  /** The key of the bucket that holds `field`. */
  keyOf(field: string): string {
    return this.buckets === 1 ? this.name : this.bucketKey(fnv1a(field) % this.buckets);
  }

  get(field: string): Promise<string | null> {
    return this.store.hashGet(this.keyOf(field), field);
  }

  set(field: string, value: string): Promise<void> {
    return this.store.hashSet(this.keyOf(field), field, value);
  }

  /** Sets the field only if it has no value; answers null when this call set it, else the value it already had. */
  setIfAbsent(field: string, value: string): Promise<string | null> {
    return this.store.hashSetIfAbsent(this.keyOf(field), field, value);
  }

  /** Each field's value, in the fields' order: the buckets read in parallel. */
  getMany(fields: readonly string[]): Promise<(string | null)[]> {
    return Promise.all(fields.map((field) => this.get(field)));
  }

  /** Sets every field to its value: one step per bucket (the last value of a field named twice wins). */
  async setMany(values: ReadonlyMap<string, string>): Promise<void> {
    const groups = this.group([...values], ([field]) => field);
    await Promise.all([...groups].map(([key, group]) => this.store.hashSetMany(key, new Map(group))));
  }

  /** Adds 1 to each field in turn (a field named twice gets 2); answers each field's value after its increment, in the fields' order. */
  async incrEach(fields: string[]): Promise<number[]> {
    if (fields.length === 0) return [];
    const groups = this.group(
      fields.map((field, at) => ({ field, at })),
      ({ field }) => field,
    );
    const answers = new Array<number>(fields.length);
    await Promise.all(
      [...groups].map(async ([key, group]) => {
        const values = await this.store.hashIncrEach(
          key,
          group.map(({ field }) => field),
        );
        group.forEach(({ at }, i) => (answers[at] = values[i]));
      }),
    );
    return answers;
  }

  /** Adds each amount to its field: one step per bucket. Answers each field's value after. */
  async incrMany(amounts: ReadonlyMap<string, number>): Promise<Map<string, number>> {
    const groups = this.group([...amounts], ([field]) => field);
    const after = new Map<string, number>();
    await Promise.all(
      [...groups].map(async ([key, group]) => {
        const values = await this.store.hashIncrMany(key, new Map(group));
        group.forEach(([field], i) => after.set(field, values[i]));
      }),
    );
    return after;
  }

  /** Every field, from every bucket (read in parallel, so not one instant across buckets). */
  async getAll(): Promise<Record<string, string>> {
    const keys = Array.from({ length: this.buckets }, (_, b) => (this.buckets === 1 ? this.name : this.bucketKey(b)));
    const parts = await Promise.all(keys.map((key) => this.store.hashGetAll(key)));
    return Object.fromEntries(parts.flatMap((part) => Object.entries(part)));
  }

  private bucketKey(bucket: number): string {
    return `${this.name}:${bucket}`;
  }

  /** Items by the key of their field's bucket, in their order within each. */
  private group<T>(items: T[], fieldOf: (item: T) => string): Map<string, T[]> {
    return groupBy(items, (item) => this.keyOf(fieldOf(item)));
  }
}

/** 32-bit FNV-1a of the text's UTF-16 code units: cheap, well spread, and the same in every process. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
