import { isCluster, type RedisClient } from '@crawler/redis';
import { EARLIER_CLUSTER_SHARDS, MAX_SHARDS, shardPrefixes } from './frontier-shards';

/** The key, beside the frontier's own, that holds the number of shards its crawl was begun with. */
export const shardCountKey = (prefix: string) => `${prefix}:shard-count`;

/** A frontier asked for with another number of shards than its crawl keeps: the process must not start on it. */
export class FrontierShardsError extends Error {
  constructor(
    readonly prefix: string,
    readonly recorded: number,
    readonly wanted: number,
  ) {
    super(
      `the frontier of this crawl (${prefix}) is split into ${recorded} shard${recorded === 1 ? '' : 's'}, but FRONTIER_SHARDS asks for ${wanted}: ` +
        'a host belongs to one shard for the whole crawl, so the count cannot change under it. ' +
        `Unset FRONTIER_SHARDS (every process then reads ${recorded}) or set it to ${recorded}, or begin a new crawl under another CRAWLER_PREFIX`,
    );
    this.name = 'FrontierShardsError';
  }
}

/**
 * How many shards the crawl's frontier is split into, for its whole life: a host's shard is a hash modulo the
 * count, so a process reading with another count would look for each host's URLs in the wrong shard and take
 * the crawl for done. The first process records the count; every later one reads it.
 *
 * With FRONTIER_SHARDS unset a new crawl gets one shard on a node, and on a cluster one a master: each master
 * holds one shard, and a script call a shard is what a page's enqueue, claim and completion cost there (with
 * 64 shards on 3 masters they cost 80 Redis commands a page instead of 55). A cluster grown later keeps the
 * frontier on as many masters as it has shards; set FRONTIER_SHARDS to the masters planned before the crawl
 * begins. A store with no record was begun before counts were recorded, with FRONTIER_SHARDS or the default of
 * then (EARLIER_CLUSTER_SHARDS on a cluster, 1 on a node): if that layout holds a store, its count is the one.
 */
export async function settleShardCount(client: RedisClient, prefix: string, wanted: number | undefined): Promise<number> {
  const key = shardCountKey(prefix);
  let recorded = await readCount(client, key);
  if (recorded === null) {
    const cluster = isCluster(client);
    const earlier = wanted ?? (cluster ? EARLIER_CLUSTER_SHARDS : 1);
    const count = (await holdsStore(client, prefix, earlier)) ? earlier : (wanted ?? (cluster ? Math.min(MAX_SHARDS, Math.max(1, client.nodes('master').length)) : 1));
    // Two processes starting at once both find no record: the first write wins, the other reads it.
    await client.set(key, count, 'NX');
    recorded = await readCount(client, key);
    if (recorded === null) throw new Error(`the frontier's shard count (${key}) could not be recorded`);
  }
  if (wanted !== undefined && wanted !== recorded) throw new FrontierShardsError(prefix, recorded, wanted);
  return recorded;
}

async function readCount(client: RedisClient, key: string): Promise<number | null> {
  const value = await client.get(key);
  if (value === null) return null;
  const count = Number(value);
  if (!Number.isInteger(count) || count < 1 || count > MAX_SHARDS)
    throw new Error(`the frontier's shard count (${key}) holds ${JSON.stringify(value)}, not a count of 1 … ${MAX_SHARDS}`);
  return count;
}

/**
 * Whether a frontier of `count` shards holds a store under `prefix`: every shard that ever routed a URL has its
 * `init` key. One shard on a node is the plain store, its keys under the prefix itself (see the factory).
 */
async function holdsStore(client: RedisClient, prefix: string, count: number): Promise<boolean> {
  const prefixes = count === 1 && !isCluster(client) ? [prefix] : shardPrefixes(prefix, count);
  const found = await Promise.all(prefixes.map((p) => client.exists(`${p}:init`)));
  return found.some((n) => n > 0);
}
