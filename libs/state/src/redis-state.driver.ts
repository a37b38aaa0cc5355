import { join } from 'node:path';
import { createRedis, groupBy, groupBySlot, isCluster, readLuaScript, scanKeys, unlinkKeys, withoutResend, type RedisClient } from '@crawler/redis';
import type { Cluster, Pipeline } from 'ioredis';
import { BitsSetCommand } from './bits-set-command';
import type { StateStore } from './state-store';

export type RedisStateStoreOptions = {
  /** Every key is stored as `${prefix}:${key}`. Must not be empty. */
  prefix: string;
} & (
  | {
      /** REDIS_URL (one node or a cluster); the store opens its own connection and closes it in `close()`. */
      url: string;
      /** Told of connection errors (ioredis keeps reconnecting; without a listener it prints each one raw). */
      onError?: (error: Error) => void;
    }
  | {
      /**
       * A connection to share; the store never closes it. A cluster client with auto-pipelining must list
       * `stateSetAddMany` and `stateSetMembersMany` in `autoPipeliningIgnoredCommands`.
       */
      client: RedisClient;
    }
);

/**
 * The compound operations, each one Lua script (in ./lua, with its KEYS and ARGV) so it is atomic. Without
 * `numberOfKeys`, the first argument gives it. A script's keys must share one slot on a cluster: a list and
 * its active flag do (the flag is tagged with the list's name); the many-set scripts are sent once per slot.
 */
const lua = (name: string) => readLuaScript(join(__dirname, `lua/${name}.lua`));
const SCRIPTS: Record<string, { numberOfKeys?: number; lua: string }> = {
  stateQueuePush: { numberOfKeys: 2, lua: lua('queue-push') },
  stateQueueHeadOrIdle: { numberOfKeys: 2, lua: lua('queue-head-or-idle') },
  stateQueueRemoveHead: { numberOfKeys: 1, lua: lua('queue-remove-head') },
  stateHashSetIfAbsent: { numberOfKeys: 1, lua: lua('hash-set-if-absent') },
  stateHashSetBounded: { numberOfKeys: 1, lua: lua('hash-set-bounded') },
  stateHashIncrMany: { numberOfKeys: 1, lua: lua('hash-incr-many') },
  stateSetAdd: { numberOfKeys: 1, lua: lua('set-add') },
  stateSetRemove: { numberOfKeys: 1, lua: lua('set-remove') },
  stateSetAddMany: { lua: lua('set-add-many') },
  stateSetMembersMany: { lua: lua('set-members-many') },
};

/**
 * Scripts that take their key count first: a cluster client's auto-pipelining would route them by that number
 * and batch them with commands of other slots, so they are sent on their own (each is already one batch). The
 * only commands kept out of the automatic pipelines: a Bloom step's BITFIELD is sent whole (see `bitfield`).
 */
export const MANY_KEY_SCRIPTS = ['stateSetAddMany', 'stateSetMembersMany'];

type ScriptedRedis = RedisClient & {
  stateQueuePush(list: string, flag: string, front: string, ...items: string[]): Promise<number>;
  stateQueueHeadOrIdle(list: string, flag: string): Promise<string | null>;
  stateQueueRemoveHead(list: string, item: string): Promise<number>;
  stateSetAdd(key: string, ...members: string[]): Promise<number[]>;
  stateSetRemove(key: string, ...members: string[]): Promise<number>;
  stateSetAddMany(numberOfKeys: number, ...keysThenMembers: string[]): Promise<number[]>;
  stateSetMembersMany(numberOfKeys: number, ...keys: string[]): Promise<string[][]>;
  stateHashSetIfAbsent(key: string, field: string, value: string): Promise<string | null>;
  stateHashSetBounded(key: string, field: string, value: string, maxFields: number, ttlMs: number): Promise<number>;
  stateHashIncrMany(key: string, ...fieldsAndAmounts: (string | number)[]): Promise<number[]>;
};

/** The shared driver: all replicas see the same state, and it outlives restarts. */
export class RedisStateStore implements StateStore {
  private readonly redis: ScriptedRedis;
  private readonly prefix: string;
  /** BITFIELDs waiting for the end of this turn (cluster only: see `bitfield`). */
  private bitfields?: { command: BitsSetCommand; resolve: (old: number[]) => void; reject: (error: unknown) => void }[];
  /** Only the store that opened the connection closes it; namespace views share it. */
  private readonly ownsConnection: boolean;

  constructor(options: RedisStateStoreOptions) {
    if (!options.prefix) throw new Error('RedisStateStore needs a non-empty prefix');
    this.prefix = options.prefix;
    this.ownsConnection = 'url' in options;
    const redis = 'url' in options ? createRedis(options.url, { enableAutoPipelining: true, autoPipeliningIgnoredCommands: MANY_KEY_SCRIPTS }) : options.client;
    if ('url' in options) redis.on('error', options.onError ?? (() => undefined));
    for (const [name, { numberOfKeys, lua }] of Object.entries(SCRIPTS)) {
      // Namespace views share a client that already has them.
      if (!(name in redis)) redis.defineCommand(name, { numberOfKeys, lua });
    }
    this.redis = redis as ScriptedRedis;
  }

  namespace(prefix: string): StateStore {
    if (!prefix) throw new Error('namespace needs a non-empty prefix');
    return new RedisStateStore({ prefix: `${this.prefix}:${prefix}`, client: this.redis });
  }

  get(key: string): Promise<string | null> {
    return this.redis.get(this.key(key));
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    if (ttlMs === undefined) await this.redis.set(this.key(key), value);
    else await this.redis.set(this.key(key), value, 'PX', ttlMs);
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    return (await withoutResend(this.redis, 'SET NX', () => this.redis.set(this.key(key), value, 'PX', ttlMs, 'NX'))) === 'OK';
  }

  async del(key: string): Promise<void> {
    // A deleted queue must not stay marked active, or its next push would not schedule it.
    await this.redis.del(this.key(key), this.activeFlag(key));
  }

  async delMany(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.perSlot(
      [...keys],
      (key) => this.key(key),
      async (group) => {
        await this.redis.del(...group.flatMap((key) => [this.key(key), this.activeFlag(key)]));
        return group.map(() => undefined);
      },
    );
  }

  incr(key: string, by = 1): Promise<number> {
    return this.redis.incrby(this.key(key), by);
  }

  hashIncr(key: string, field: string, by = 1): Promise<number> {
    return this.redis.hincrby(this.key(key), field, by);
  }

  async hashIncrEach(key: string, fields: string[]): Promise<number[]> {
    if (fields.length === 0) return [];
    // One HINCRBY per distinct field (a batch's URLs are mostly of a few hosts), by its count; one script
    // makes the field's k increments consecutive, so they were its final value's last k.
    const counts = new Map<string, number>();
    for (const field of fields) counts.set(field, (counts.get(field) ?? 0) + 1);
    if (counts.size === 1) {
      // One field (the usual batch: one host's URLs): one HINCRBY, atomic by itself.
      const after = await this.redis.hincrby(this.key(key), fields[0], fields.length);
      return fields.map((_, i) => after - fields.length + i + 1);
    }
    const after = await this.redis.stateHashIncrMany(this.key(key), ...[...counts].flat());
    const next = new Map<string, number>();
    [...counts.keys()].forEach((field, i) => next.set(field, Number(after[i]) - counts.get(field)! + 1));
    return fields.map((field) => {
      const value = next.get(field)!;
      next.set(field, value + 1);
      return value;
    });
  }

  async hashIncrMany(key: string, amounts: ReadonlyMap<string, number>): Promise<number[]> {
    if (amounts.size === 0) return [];
    // A script, not MULTI … EXEC: as atomic, one command fewer (every process adds its counts five times a second).
    return (await this.redis.stateHashIncrMany(this.key(key), ...[...amounts].flat())).map(Number);
  }

  async hashSet(key: string, field: string, value: string): Promise<void> {
    await this.redis.hset(this.key(key), field, value);
  }

  async hashSetMany(key: string, values: ReadonlyMap<string, string>): Promise<void> {
    if (values.size === 0) return;
    await this.redis.hset(this.key(key), values);
  }

  hashGet(key: string, field: string): Promise<string | null> {
    return this.redis.hget(this.key(key), field);
  }

  hashSetIfAbsent(key: string, field: string, value: string): Promise<string | null> {
    return this.redis.stateHashSetIfAbsent(this.key(key), field, value);
  }

  hashGetAll(key: string): Promise<Record<string, string>> {
    return this.redis.hgetall(this.key(key));
  }

  async hashSetBounded(key: string, field: string, value: string, maxFields: number, ttlMs: number): Promise<boolean> {
    return (await this.redis.stateHashSetBounded(this.key(key), field, value, maxFields, ttlMs)) === 1;
  }

  async hashDelete(key: string, fields: string[]): Promise<void> {
    if (fields.length) await this.redis.hdel(this.key(key), ...fields);
  }

  async setAdd(key: string, members: string[]): Promise<boolean[]> {
    if (members.length === 0) return [];
    const added = await withoutResend(this.redis, 'SADD', () => this.redis.stateSetAdd(this.key(key), ...members));
    return added.map((n) => n === 1);
  }

  async setHas(key: string, member: string): Promise<boolean> {
    return (await this.redis.sismember(this.key(key), member)) === 1;
  }

  setRemove(key: string, member: string | readonly string[]): Promise<number> {
    const members = typeof member === 'string' ? [member] : member;
    if (members.length === 0) return this.redis.scard(this.key(key));
    return this.redis.stateSetRemove(this.key(key), ...members);
  }

  setMembers(key: string): Promise<string[]> {
    return this.redis.smembers(this.key(key));
  }

  /** One script on a node; on a cluster one per slot, in parallel, so each slot's sets are read at one instant. */
  async setMembersMany(keys: string[]): Promise<string[][]> {
    if (keys.length === 0) return [];
    const fullKeys = keys.map((key) => this.key(key));
    return this.perSlot(
      fullKeys,
      (k) => k,
      (group) => this.redis.stateSetMembersMany(group.length, ...group),
    );
  }

  /** One atomic script on a node; on a cluster one per slot, in parallel: atomic per slot, not across slots. */
  async setAddMany(entries: [key: string, member: string][]): Promise<boolean[]> {
    if (entries.length === 0) return [];
    const fullEntries = entries.map(([key, member]): [string, string] => [this.key(key), member]);
    const added = await withoutResend(this.redis, 'SADD', () =>
      this.perSlot(
        fullEntries,
        ([key]) => key,
        (group) => this.redis.stateSetAddMany(group.length, ...group.map(([key]) => key), ...group.map(([, member]) => member)),
      ),
    );
    return added.map((n) => n === 1);
  }

  async queuePush(key: string, items: string[], front = false): Promise<boolean> {
    if (items.length === 0) return false;
    const activated = await this.redis.stateQueuePush(this.key(key), this.activeFlag(key), front ? '1' : '0', ...items);
    return activated === 1;
  }

  queueHeadOrIdle(key: string): Promise<string | null> {
    return this.redis.stateQueueHeadOrIdle(this.key(key), this.activeFlag(key));
  }

  async queueRemoveHead(key: string, item: string): Promise<boolean> {
    return (await this.redis.stateQueueRemoveHead(this.key(key), item)) === 1;
  }

  queueLength(key: string): Promise<number> {
    return this.redis.llen(this.key(key));
  }

  /** LPUSH then LTRIM in one transaction: one key, so one slot on a cluster. */
  async listPushCapped(key: string, items: string[], max: number): Promise<void> {
    if (items.length === 0) return;
    const results = await this.redis
      .multi()
      .lpush(this.key(key), ...items)
      .ltrim(this.key(key), 0, max - 1)
      .exec();
    const failed = results?.find(([error]) => error);
    if (!results || failed) throw failed?.[0] ?? new Error('listPushCapped: transaction aborted');
  }

  listHead(key: string, count: number): Promise<string[]> {
    return count > 0 ? this.redis.lrange(this.key(key), 0, count - 1) : Promise.resolve([]);
  }

  /**
   * One BITFIELD of `SET u1 <offset> 1` per bit: atomic, in order (a group sees the bits of the groups before
   * it), and each answer is the bit's old value. A Lua loop of SETBITs did the same for 2.5× the Redis CPU.
   */
  async bitsTestAndSet(key: string, groups: number[][]): Promise<boolean[]> {
    if (groups.length === 0) return [];
    const offsets = groups.flat();
    if (offsets.length === 0) return groups.map(() => true);
    const old = await this.bitfield(new BitsSetCommand(this.key(key), offsets));
    let at = 0;
    return groups.map((group) => {
      let all = true;
      for (let i = 0; i < group.length; i++) if (old[at++] === 0) all = false;
      return all;
    });
  }

  /**
   * On one node, sent at once. On a cluster, the BITFIELDs asked in one turn of the event loop (a Bloom
   * step's, one a shard) leave together at its end: one pipeline, so one write, a master. A command sent
   * whole (`sendCommand`) never joins an automatic pipeline.
   */
  private bitfield(command: BitsSetCommand): Promise<number[]> {
    if (!isCluster(this.redis)) {
      return withoutResend(this.redis, 'BITFIELD SET', () => {
        this.redis.sendCommand(command);
        return command.promise;
      }) as Promise<number[]>;
    }
    return new Promise((resolve, reject) => {
      if (!this.bitfields) {
        this.bitfields = [];
        setImmediate(() => this.sendBitfields());
      }
      this.bitfields.push({ command, resolve, reject });
    });
  }

  private sendBitfields(): void {
    const cluster = this.redis as Cluster;
    const calls = this.bitfields ?? [];
    this.bitfields = undefined;
    // Grouped by the master the client's slot map names (a pipeline on a cluster must keep to one).
    for (const group of groupBy(calls, (call) => cluster.slots[call.command.getSlot()]?.[0]).values()) {
      withoutResend(cluster, 'BITFIELD SET', () => {
        // Typed as chainable commands only; a pipeline takes a whole command as a client does.
        const pipeline = cluster.pipeline() as unknown as Pipeline;
        for (const { command } of group) pipeline.sendCommand(command);
        return pipeline.exec();
      }).then(
        (replies) => group.forEach((call, i) => (replies?.[i]?.[0] ? call.reject(replies[i][0]) : call.resolve(replies?.[i]?.[1] as number[]))),
        (error) => group.forEach((call) => call.reject(error)),
      );
    }
  }

  bitCount(key: string): Promise<number> {
    return this.redis.bitcount(this.key(key));
  }

  /** Every master is scanned (a cluster spreads the namespace over them); active flags begin with `{`. */
  async clear(): Promise<void> {
    for (const match of [`${escapeGlob(this.prefix)}:*`, `{${escapeGlob(this.prefix)}:*`]) {
      for await (const keys of scanKeys(this.redis, match)) await unlinkKeys(this.redis, keys);
    }
  }

  async close(): Promise<void> {
    if (this.ownsConnection && this.redis.status !== 'end') await this.redis.quit();
  }

  private key(key: string): string {
    return `${this.prefix}:${key}`;
  }

  /**
   * The list's active flag, in the list's slot (a script takes both): `{list}:~active`. A list whose name
   * already has braces keeps its own hash tag in `list:~active`.
   */
  private activeFlag(key: string): string {
    const list = this.key(key);
    return /[{}]/.test(list) ? `${list}:~active` : `{${list}}:~active`;
  }

  /**
   * Runs `run` on the items of each slot (all at once on a node) in parallel, and answers the runs' answers
   * in the items' order.
   */
  private async perSlot<T, A>(items: T[], keyOf: (item: T) => string, run: (group: T[]) => Promise<A[]>): Promise<A[]> {
    if (!isCluster(this.redis)) return run(items);
    const indexed = items.map((item, at) => ({ item, at }));
    const groups = [...groupBySlot(indexed, ({ item }) => keyOf(item)).values()];
    const answers = await Promise.all(groups.map((group) => run(group.map(({ item }) => item))));
    const inOrder = new Array<A>(items.length);
    groups.forEach((group, g) => group.forEach(({ at }, i) => (inOrder[at] = answers[g][i])));
    return inOrder;
  }
}

/** SCAN MATCH treats these as pattern syntax; a prefix must match literally. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
