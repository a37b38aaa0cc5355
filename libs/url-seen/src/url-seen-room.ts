import type { CrawlerConfig } from '@crawler/config';
import { addressOf, createRedis, describeRedis, isCluster, mastersOf, parseRedisUrl, slotOf, type RedisClient } from '@crawler/redis';
import { RedisStateStore } from '@crawler/state';
import { BloomSeenSet } from './bloom-seen-set';
import { seenSetFor } from './url-seen.service';

/**
 * A Bloom filter Redis has no room for. Its bitmaps are taken whole by the first URLs (a bit is set near the
 * end of every shard at once), so a crawl on a Redis whose `maxmemory` cannot hold them would be out of memory
 * before its first page: refused at start, naming the settings that size the filter.
 */
export class UrlSeenRoomError extends Error {
  constructor(
    readonly needBytes: number,
    readonly usedBytes: number,
    readonly maxBytes: number,
    config: CrawlerConfig,
    where: string,
    bytesPerUrl: number,
  ) {
    const { expectedUrls, falsePositiveRate } = config.seen;
    const highWater = config.redisMemoryHighWater;
    const atLeast = Math.ceil((usedBytes + needBytes) / highWater);
    super(
      `URL-seen's Bloom filter (URL_SEEN_EXPECTED_URLS ${expectedUrls} at URL_SEEN_FALSE_POSITIVE_RATE ${falsePositiveRate}) ` +
        `takes ${mib(needBytes)} more of ${where}, which has maxmemory ${mib(maxBytes)} with ${mib(usedBytes)} used: ` +
        `Redis would be past REDIS_MEMORY_HIGH_WATER (${highWater}) of its maxmemory before the first page. ` +
        `Lower URL_SEEN_EXPECTED_URLS or raise URL_SEEN_FALSE_POSITIVE_RATE (the filter is about ` +
        `${bytesPerUrl.toFixed(2)} bytes a URL), set URL_SEEN_MODE=exact (memory grows with the URLs seen), ` +
        `or raise maxmemory to at least ${mib(atLeast)}.`,
    );
    this.name = 'UrlSeenRoomError';
  }
}

/**
 * Whether URL-seen's Bloom filter fits in REDIS_URL: the bytes of its shards not yet written, on each master
 * that holds some, must keep that master under REDIS_MEMORY_HIGH_WATER of its `maxmemory` (read from
 * `INFO memory`). A shard already written (a resumed crawl) needs nothing more. Undefined when it fits, when
 * there is no `maxmemory`, in exact mode (it grows with the crawl, and the intake pause covers it), or when
 * Redis cannot tell within `redisStartupWaitMs` (nothing is refused on a guess).
 */
export async function checkUrlSeenRoom(config: CrawlerConfig): Promise<UrlSeenRoomError | undefined> {
  if (!config.redisUrl || config.seen.mode !== 'bloom') return undefined;
  const redis = createRedis(config.redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
  redis.on('error', () => undefined);
  let timer: NodeJS.Timeout | undefined;
  try {
    const check = findShortfall(redis, config);
    const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), config.redisStartupWaitMs).unref()));
    return await Promise.race([check.catch(() => undefined), timeout]);
  } finally {
    clearTimeout(timer);
    redis.disconnect();
  }
}

async function findShortfall(redis: RedisClient, config: CrawlerConfig): Promise<UrlSeenRoomError | undefined> {
  await redis.connect();
  const store = new RedisStateStore({ client: redis, prefix: config.prefix }).namespace('url-seen');
  const set = seenSetFor(store, config) as BloomSeenSet;
  // A filter written before its shards were spaced (on a cluster) is the one in use: its keys are measured.
  const recorded = await store.hashGet('meta', 'layout');
  if (recorded) set.adopt(recorded);
  const shards = set.shardSizes();
  const bytesPerUrl = shards.reduce((sum, s) => sum + s.bytes, 0) / config.seen.expectedUrls;
  const needByMaster = new Map<string, number>();
  for (const { key, bytes } of shards) {
    const fullKey = `${config.prefix}:url-seen:${key}`;
    // A shard already written (a resumed crawl) has taken its memory, give or take the bytes past its highest bit set.
    if ((await redis.strlen(fullKey)) > 0) continue;
    const master = isCluster(redis) ? redis.slots[slotOf(fullKey)]?.[0] : addressOf(redis);
    if (master === undefined) return undefined;
    needByMaster.set(master, (needByMaster.get(master) ?? 0) + bytes);
  }
  for (const node of mastersOf(redis)) {
    const need = needByMaster.get(addressOf(node)) ?? 0;
    if (need === 0) continue;
    const info = await node.info('memory');
    const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? 0);
    const usedBytes = field('used_memory');
    const maxBytes = field('maxmemory');
    if (maxBytes > 0 && usedBytes + need > config.redisMemoryHighWater * maxBytes) {
      const where = isCluster(redis) ? `the Redis Cluster master ${addressOf(node)}` : `the Redis at ${describeRedis(parseRedisUrl(config.redisUrl!))}`;
      return new UrlSeenRoomError(need, usedBytes, maxBytes, config, where, bytesPerUrl);
    }
  }
  return undefined;
}

function mib(bytes: number): string {
  return `${(bytes / 1048576).toFixed(1)} MiB`;
}
