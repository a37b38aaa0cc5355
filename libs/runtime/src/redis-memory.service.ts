import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { addressOf, createRedis, isCluster, mastersOf, type RedisClient } from '@crawler/redis';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { LOGGER, Logger } from '@crawler/logging';

export interface RedisMemory {
  usedBytes: number;
  /** Redis's `maxmemory`; 0 = no limit. */
  maxBytes: number;
  /** At or above REDIS_MEMORY_HIGH_WATER of `maxmemory`: intake is paused until memory is freed or raised. */
  full: boolean;
  /** On a cluster, the master these figures are of (host:port): the fullest. */
  master?: string;
}

/**
 * Redis's memory use, read with `INFO memory` at most every REDIS_MEMORY_CHECK_MS. With
 * `maxmemory-policy noeviction` (the only policy the crawl starts with) a full Redis refuses writes; the
 * frontier reads this before each claim and dispatches nothing while Redis is near full, so the pipeline
 * drains instead of failing, and resumes once memory is freed or `maxmemory` raised. On a cluster every
 * master is read and the fullest is the reading: a full master refuses writes to its slots, which any job
 * may need.
 */
@Injectable()
export class RedisMemoryGauge implements OnApplicationShutdown {
  private redis?: RedisClient;
  private last?: { at: number; value: RedisMemory | null };
  private reading?: Promise<RedisMemory | null>;
  private wasFull = false;

  constructor(
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** The latest reading; null without Redis, or while it cannot be read (the outage is reported elsewhere). */
  async read(): Promise<RedisMemory | null> {
    if (!this.config.redisUrl) return null;
    if (this.last && Date.now() - this.last.at < this.config.redisMemoryCheckMs) return this.last.value;
    this.reading ??= this.measure().finally(() => (this.reading = undefined));
    return this.reading;
  }

  async isFull(): Promise<boolean> {
    return (await this.read())?.full ?? false;
  }

  onApplicationShutdown() {
    this.redis?.disconnect();
  }

  private async measure(): Promise<RedisMemory | null> {
    let value: RedisMemory | null = null;
    try {
      const redis = this.connection();
      const readings = await Promise.all(
        mastersOf(redis).map(async (node) => {
          const info = await node.info('memory');
          const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? 0);
          const usedBytes = field('used_memory');
          const maxBytes = field('maxmemory');
          const full = maxBytes > 0 && usedBytes >= this.config.redisMemoryHighWater * maxBytes;
          return { usedBytes, maxBytes, full, ...(isCluster(redis) ? { master: addressOf(node) } : {}) };
        }),
      );
      value = fullest(readings);
    } catch {
      value = null;
    }
    this.last = { at: Date.now(), value };
    if (value && value.full !== this.wasFull) {
      this.wasFull = value.full;
      const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;
      if (value.full) {
        this.logger.warn(
          { event: 'redis-memory-full', ...value },
          `Redis memory${onMaster(value)} at ${mib(value.usedBytes)} of maxmemory ${mib(value.maxBytes)} (REDIS_MEMORY_HIGH_WATER ${this.config.redisMemoryHighWater}): intake paused until memory is freed or maxmemory raised`,
        );
      } else {
        this.logger.info(
          { event: 'redis-memory-freed', ...value },
          `Redis memory${onMaster(value)} at ${mib(value.usedBytes)} of maxmemory ${mib(value.maxBytes)}: intake resumed`,
        );
      }
    }
    return value;
  }

  private connection(): RedisClient {
    if (!this.redis) {
      // Fails fast while Redis is down: a reading is then simply unknown.
      this.redis = createRedis(this.config.redisUrl!, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
      this.redis.on('error', () => undefined);
    }
    return this.redis;
  }
}

/**
 * The fullest of the masters' readings: the highest used / maxmemory among those with a maxmemory, else (no
 * limit anywhere) the most used. Null when there are none (a cluster not yet connected).
 */
export function fullest(readings: RedisMemory[]): RedisMemory | null {
  const fuller = (a: RedisMemory, b: RedisMemory) => {
    if (a.maxBytes > 0 !== b.maxBytes > 0) return a.maxBytes > 0;
    return a.maxBytes > 0 ? a.usedBytes / a.maxBytes > b.usedBytes / b.maxBytes : a.usedBytes > b.usedBytes;
  };
  return readings.reduce<RedisMemory | null>((worst, m) => (!worst || fuller(m, worst) ? m : worst), null);
}

/** " on master host:port" for a cluster's reading, "" for one node's. */
function onMaster(m: RedisMemory): string {
  return m.master ? ` on master ${m.master}` : '';
}

/** "used 9.8 MiB of maxmemory 10.0 MiB: intake paused" for status and readiness. */
export function describeRedisMemory(m: RedisMemory): string {
  const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;
  return `Redis memory full${onMaster(m)}: used ${mib(m.usedBytes)} of maxmemory ${mib(m.maxBytes)}; intake paused until memory is freed or maxmemory raised`;
}
