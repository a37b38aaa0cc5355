import { createRedis, isCluster, parseRedisUrl } from '@crawler/redis';
import type { FrontierStore, FrontierStoreOptions } from './frontier-store';
import { backQueuesPerShard, shardOfHost, shardPrefixes } from './frontier-shards';
import { settleShardCount, shardCountKey } from './recorded-shards';
import { RecordedShardsFrontierStore } from './recorded-shards-frontier-store';
import { RedisFrontierStore } from './redis-frontier-store.driver';
import { ShardedFrontierStore } from './sharded-frontier-store.driver';

export interface RedisFrontierTarget {
  /** REDIS_URL: one node or a cluster. */
  url: string;
  /** The frontier's key prefix (`<crawl prefix>:frontier`). */
  prefix: string;
  /** FRONTIER_SHARDS. @defaultValue the crawl's recorded count; for a new crawl 1 on a node, one a master on a cluster (settleShardCount) */
  shards?: number;
  /** Told of connection errors (ioredis keeps reconnecting; without a listener it prints each one raw). */
  onError?: (error: Error) => void;
}

/**
 * The frontier in Redis, split into the shards its crawl keeps (settleShardCount), read on first use. One
 * shard on a single node is the plain store under the prefix, the key layout of an unsharded frontier (so a
 * crawl started before sharding resumes; no ShardedFrontierStore in between). Otherwise S stores under
 * `<prefix>:{<tag>}:`, sharing one connection, each with its part of the back queues, behind a
 * ShardedFrontierStore; on a cluster even one shard is tagged, to live in one slot.
 */
export function createRedisFrontierStore(target: RedisFrontierTarget, settings: FrontierStoreOptions): RecordedShardsFrontierStore {
  // Lazy: every process has the store injected, only the frontier and the control plane use it.
  const client = createRedis(parseRedisUrl(target.url), { enableAutoPipelining: true, maxRetriesPerRequest: null, lazyConnect: true });
  client.on('error', target.onError ?? (() => undefined));
  const build = async (): Promise<FrontierStore> => {
    const count = await settleShardCount(client, target.prefix, target.shards);
    if (count === 1 && !isCluster(client)) return new RedisFrontierStore({ client, prefix: target.prefix }, settings);
    const perShard = { ...settings, backQueues: backQueuesPerShard(settings.backQueues, count) };
    const shards = shardPrefixes(target.prefix, count).map((prefix) => new RedisFrontierStore({ client, prefix }, perShard));
    return new ShardedFrontierStore(shards, (host) => shardOfHost(host, count));
  };
  return new RecordedShardsFrontierStore(build, {
    forget: async () => {
      await client.del(shardCountKey(target.prefix));
    },
    // Not connected (never used, or Redis down): a QUIT would wait for a connection that may never come.
    close: async () => {
      if (client.status === 'ready') await client.quit();
      else client.disconnect();
    },
  });
}
