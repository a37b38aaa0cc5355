import { addressOf, createRedis, describeRedis, isCluster, mastersOf, parseRedisUrl } from '@crawler/redis';

/**
 * A Redis that may evict keys drops queued jobs, frontier queues and URL-seen bits when it fills, and the
 * crawl then ends "complete" with pages never fetched. Only `noeviction` turns a full Redis into refused
 * writes, which the crawl waits out. The policy is read from `INFO memory` (not CONFIG GET, which managed
 * Redis services often disable). On a cluster every master is read: each holds its own slots' keys, so one
 * evicting master loses them.
 */
export class EvictionPolicyError extends Error {
  constructor(
    readonly url: string,
    readonly policy: string,
    /** The cluster master that evicts (host:port); absent for one node. */
    readonly master?: string,
  ) {
    super(
      `${master ? `the Redis Cluster master ${master} (of ${redactUrl(url)})` : `the Redis at ${redactUrl(url)}`} has maxmemory-policy ${policy}: ` +
        `when it fills it deletes keys (queued URLs, queue jobs, URL-seen state) and the crawl loses them silently. ` +
        `Set maxmemory-policy noeviction${master ? ' on every master' : ''}: in redis.conf, with ` +
        `\`redis-cli CONFIG SET maxmemory-policy noeviction\`, or in your managed Redis's parameter group.`,
    );
  }
}

export interface MasterEvictionPolicy {
  /** host:port of the node (the one node, or a cluster master). */
  master: string;
  policy: string;
}

/** Each master's `maxmemory_policy` as `INFO memory` reports it (one entry for one node). Waits (the client reconnects) until they answer. */
export async function readEvictionPolicies(url: string): Promise<MasterEvictionPolicy[]> {
  const redis = createRedis(url, { maxRetriesPerRequest: null, lazyConnect: true });
  // Errors while it reconnects are expected (the caller decides how long to wait); without a listener ioredis prints them.
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return await Promise.all(
      mastersOf(redis).map(async (node) => {
        const info = await node.info('memory');
        const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
        if (!policy) throw new Error(`the Redis at ${isCluster(redis) ? addressOf(node) : redactUrl(url)} does not report maxmemory_policy in INFO memory`);
        return { master: addressOf(node), policy };
      }),
    );
  } finally {
    redis.disconnect();
  }
}

/** The first master not set to `noeviction`, as the error naming it (on one node, without a master's address); undefined when all are. */
export async function findEvictingMaster(url: string): Promise<EvictionPolicyError | undefined> {
  const evicting = (await readEvictionPolicies(url)).find(({ policy }) => policy !== 'noeviction');
  if (!evicting) return undefined;
  return new EvictionPolicyError(url, evicting.policy, parseRedisUrl(url).cluster ? evicting.master : undefined);
}

/** Throws EvictionPolicyError unless the Redis at `url` (every master of a cluster) is set to `noeviction`. */
export async function assertNoEviction(url: string): Promise<void> {
  const error = await findEvictingMaster(url);
  if (error) throw error;
}

/** The URL without its password, for messages. */
function redactUrl(url: string): string {
  try {
    return describeRedis(parseRedisUrl(url));
  } catch {
    return 'REDIS_URL';
  }
}
