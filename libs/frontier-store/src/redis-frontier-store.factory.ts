import { createRedis, parseRedisUrl } from '@crawler/redis';
import type { FrontierStore, FrontierStoreOptions } from './frontier-store';
import { backQueuesPerShard, CLUSTER_DEFAULT_SHARDS, shardOfHost, shardPrefixes } from './frontier-shards';
import { RedisFrontierStore } from './redis-frontier-store.driver';
import { ShardedFrontierStore } from './sharded-frontier-store.driver';

export interface RedisFrontierTarget {
  /** REDIS_URL: one node or a cluster. */
  url: string;
  /** The frontier's key prefix (`<crawl prefix>:frontier`). */
  prefix: string;
  /** FRONTIER_SHARDS. @defaultValue 1 on a node, CLUSTER_DEFAULT_SHARDS on a cluster */
  shards?: number;
  /** Told of connection errors (ioredis keeps reconnecting; without a listener it prints each one raw). */
  onError?: (error: Error) => void;
}

/**
 * The frontier in Redis. One shard on a single node is the plain store under the prefix, the key layout of
 * an unsharded frontier (so a crawl started before sharding resumes, and nothing wraps the bench path).
 * Otherwise S stores under `<prefix>:{<tag>}:`, sharing one connection, each with its part of the back
 * queues, behind a ShardedFrontierStore; on a cluster even one shard is tagged, to live in one slot.
 */
export function createRedisFrontierStore(target: RedisFrontierTarget, settings: FrontierStoreOptions): FrontierStore {
  const cluster = parseRedisUrl(target.url).cluster;
  const count = target.shards ?? (cluster ? CLUSTER_DEFAULT_SHARDS : 1);
  if (count === 1 && !cluster) return new RedisFrontierStore({ url: target.url, prefix: target.prefix, onError: target.onError }, settings);
  // Lazy: every process has the store injected, only the frontier and the control plane use it.
  const client = createRedis(target.url, { enableAutoPipelining: true, maxRetriesPerRequest: null, lazyConnect: true });
  client.on('error', target.onError ?? (() => undefined));
  const perShard = { ...settings, backQueues: backQueuesPerShard(settings.backQueues, count) };
  const shards = shardPrefixes(target.prefix, count).map((prefix) => new RedisFrontierStore({ client, prefix }, perShard));
  return new ShardedFrontierStore(
    shards,
    (host) => shardOfHost(host, count),
    async () => {
      if (client.status === 'wait') client.disconnect();
      else await client.quit();
    },
  );
}
