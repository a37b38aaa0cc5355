import { createRedis } from '@crawler/redis';
import { shardCountKey } from '@crawler/frontier-store';
import { clearPrefix, REDIS_URL } from '../support/redis-prefix';
import { startService, stopService } from '../support/service-processes';
import { removeTempDirs, tempDir } from '../support/temp-dirs';

/**
 * A crawl keeps the number of frontier shards it began with: the frontier and the control plane, started with
 * FRONTIER_SHARDS set to another count, refuse to start and say why (they would read every host's URLs in the
 * wrong shard and take the crawl for done); unset, they read the crawl's own count.
 */
describe('the frontier shard count of a crawl, at a process start', () => {
  const prefix = `t35-shard-count-${process.pid}`;
  const env = (more: Record<string, string>) => ({ REDIS_URL, CRAWLER_PREFIX: prefix, CRAWLER_DATA_DIR: tempDir('shard-count-'), ...more });
  const redis = createRedis(REDIS_URL);

  beforeAll(async () => {
    await redis.set(shardCountKey(`${prefix}:frontier`), 3);
  });
  afterAll(async () => {
    await clearPrefix(prefix, REDIS_URL);
    await redis.quit();
    removeTempDirs();
  });

  it.each(['frontier', 'control-plane'])(
    '%s refuses another count, naming both and the way out, and exits non-zero',
    async (service) => {
      const started = startService(service, env({ FRONTIER_SHARDS: '2' }));
      await expect(started).rejects.toThrow(
        /exited with [1-9][0-9]*:[\s\S]*could not start: the frontier of this crawl .* is split into 3 shards, but FRONTIER_SHARDS asks for 2[\s\S]*Unset FRONTIER_SHARDS/,
      );
    },
    60_000,
  );

  it('the frontier starts on the crawl’s own count when FRONTIER_SHARDS is unset', async () => {
    const service = await startService('frontier', env({}));
    try {
      expect(await redis.get(shardCountKey(`${prefix}:frontier`))).toBe('3');
    } finally {
      expect(await stopService(service)).toBe(0);
    }
  }, 60_000);
});
