/**
 * Shared crawl state. Drivers: Redis (shared by all replicas, survives restarts) and in-memory (embedded).
 * Every compound operation below is atomic in both drivers (a Lua script in Redis).
 *
 * An answer that tells whether the call changed something (setIfAbsent, setAdd, setAddMany, bitsTestAndSet)
 * is this call's own or none: when the connection is lost while such a call is in flight, Redis may have
 * applied it, and a copy sent again would find that change and answer "not new". The Redis driver then
 * throws (`Connection lost before the reply to …`, a Redis outage to its callers) instead of answering.
 */
export interface StateStore {
  /** A view whose keys all live under `prefix:` — each service owns its namespace. */
  namespace(prefix: string): StateStore;

  get(key: string): Promise<string | null>;
  /** Sets a value, expiring after `ttlMs` when given. */
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  /** Sets a value only if the key has none (expiring after `ttlMs`); answers whether this call set it. */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  del(key: string): Promise<void>;
  /** `del` of many keys: one step a slot (one on a node). */
  delMany(keys: readonly string[]): Promise<void>;
  incr(key: string, by?: number): Promise<number>;

  hashIncr(key: string, field: string, by?: number): Promise<number>;
  /** Adds 1 to each field in turn (a field named twice gets 2), in one step; answers each field's value after its increment. */
  hashIncrEach(key: string, fields: string[]): Promise<number[]>;
  /** Adds each amount to its field, all in one step (one round trip, however many fields); answers the fields' values after, in their order. */
  hashIncrMany(key: string, amounts: ReadonlyMap<string, number>): Promise<number[]>;
  hashSet(key: string, field: string, value: string): Promise<void>;
  /** Sets every field to its value in one step (one round trip, however many fields). */
  hashSetMany(key: string, values: ReadonlyMap<string, string>): Promise<void>;
  hashGet(key: string, field: string): Promise<string | null>;
  /** Sets the field only if it has no value; answers null when this call set it, else the value it already had. */
  hashSetIfAbsent(key: string, field: string, value: string): Promise<string | null>;
  hashGetAll(key: string): Promise<Record<string, string>>;
  /**
   * Sets a field of a hash kept to `maxFields` fields, in one step: a new field is refused (answers false) when the
   * hash is full, a field it has is overwritten (true). The hash then lives at least `ttlMs` more: a call only ever
   * pushes its expiry later. For a small map many replicas write at once and nothing else bounds (a site's cookies).
   */
  hashSetBounded(key: string, field: string, value: string, maxFields: number, ttlMs: number): Promise<boolean>;
  /** Removes fields (absent ones are no matter); a hash left empty is gone. */
  hashDelete(key: string, fields: string[]): Promise<void>;

  /** Adds members; answers, for each member, whether it was new. */
  setAdd(key: string, members: string[]): Promise<boolean[]>;
  setHas(key: string, member: string): Promise<boolean>;
  /** Removes a member, or several; answers how many members are left (0: the set is gone), in the same step. */
  setRemove(key: string, member: string | readonly string[]): Promise<number>;
  setMembers(key: string): Promise<string[]>;
  /** The members of each set, in one step (one round trip however many sets; on a Redis Cluster one per slot, in parallel). */
  setMembersMany(keys: string[]): Promise<string[][]>;

  /**
   * Adds each member to its own set, every entry in one atomic step (one round trip however many sets);
   * answers, for each entry, whether its member was new to its set. For a set split into many small ones
   * (URL-seen's fingerprint buckets). On a Redis Cluster, one atomic step per slot, in parallel: each
   * entry is still added and answered atomically, but the batch is not one instant.
   */
  setAddMany(entries: [key: string, member: string][]): Promise<boolean[]>;

  /**
   * Appends items to a FIFO queue (at its head when `front`). Answers true when the queue was idle and this
   * call made it active: the caller must then schedule it. A queue stays active until `queueHeadOrIdle`
   * finds it empty.
   */
  queuePush(key: string, items: string[], front?: boolean): Promise<boolean>;
  /** The head item, left in place; null when the queue is empty, in which case it is marked idle in the same step. */
  queueHeadOrIdle(key: string): Promise<string | null>;
  /** Removes the head item if it equals `item` (so a replayed removal cannot drop a later item). */
  queueRemoveHead(key: string, item: string): Promise<boolean>;
  queueLength(key: string): Promise<number>;

  /**
   * Puts items at the head of a list, the last given first, and keeps only its first `max`, in one step: a log
   * that keeps its newest entries and never grows past `max`.
   */
  listPushCapped(key: string, items: string[], max: number): Promise<void>;
  /** The first `count` items of such a list: the newest first. */
  listHead(key: string, count: number): Promise<string[]>;

  /**
   * For each group of bit offsets: sets them all and answers whether every one was already set
   * (a Bloom filter's atomic test-and-set). Offsets are < 2^32.
   */
  bitsTestAndSet(key: string, groups: number[][]): Promise<boolean[]>;
  /** Number of bits set. */
  bitCount(key: string): Promise<number>;

  /** Deletes every key of this namespace (tests, a fresh crawl). */
  clear(): Promise<void>;
  close(): Promise<void>;
}

export const STATE_STORE = Symbol('STATE_STORE');
