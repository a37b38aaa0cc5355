import { hashTag, MAX_SPACED_TAGS, spacedTags } from '@crawler/redis';
import { registrableDomain } from '@crawler/url';

/**
 * Shards of the frontier on a Redis Cluster. Each shard's keys share one hash tag, so the shard lives in one
 * slot (its scripts may touch any of its keys); the tags are picked so the shards' slots are evenly spaced
 * over the 16384, and a cluster gives each master a contiguous slot range: S shards spread over M masters
 * S/M each, give or take one.
 */

/**
 * Shards on a cluster when FRONTIER_SHARDS was unset, before a crawl recorded its count (recorded-shards.ts): a
 * crawl begun then, found with no record, is read with these.
 */
export const EARLIER_CLUSTER_SHARDS = 64;
/** More shards than this would leave so few slots between two tags that finding them gets slow. */
export const MAX_SHARDS = MAX_SPACED_TAGS;

/** The hash tag text of each of `count` shards (`f<i>…`), their slots evenly spaced (see spacedTags). */
export function shardTags(count: number): string[] {
  if (!Number.isInteger(count) || count < 1 || count > MAX_SHARDS) throw new RangeError(`shards: 1 … ${MAX_SHARDS} (got ${count})`);
  return spacedTags('f', count);
}

/** Shard i's key prefix under the frontier's prefix: `<prefix>:{<tag>}`, one slot for all its keys. */
export function shardPrefixes(prefix: string, count: number): string[] {
  // A brace in the prefix would open the hash tag before the shard's own.
  if (/[{}]/.test(prefix)) throw new Error(`the frontier's key prefix cannot hold braces: ${JSON.stringify(prefix)}`);
  return shardTags(count).map((tag) => `${prefix}:${hashTag(tag)}`);
}

/**
 * The shard of a host (`hostname[:port]`): a stable hash (FNV-1a) of its registrable domain, or of the
 * address for an IP literal, so that a site's subdomains (which mostly share an address) share a shard and
 * so its per-IP pacing.
 */
export function shardOfHost(host: string, count: number): number {
  if (count === 1) return 0;
  const hostname = /^(\[[^\]]*\]|[^:]*)/.exec(host)![1];
  const site = registrableDomain(hostname);
  let hash = 0x811c9dc5;
  for (let i = 0; i < site.length; i++) {
    hash ^= site.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % count;
}

/** Back queues of one shard: the crawl's divided among the shards, rounded up, at least 1. */
export function backQueuesPerShard(backQueues: number, count: number): number {
  return Math.max(1, Math.ceil(backQueues / count));
}
