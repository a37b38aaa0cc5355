import { Redis } from 'ioredis';
import { MemoryStateStore } from './memory-state.driver';
import { RedisStateStore } from './redis-state.driver';
import { stateStoreContract } from './state-store.contract';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const uniquePrefix = () => `test-${process.pid}-${Math.random().toString(36).slice(2)}`;

stateStoreContract('memory', async () => new MemoryStateStore());
stateStoreContract('memory with a prefix', async () => new MemoryStateStore({ prefix: 'crawl' }));
stateStoreContract('redis', async () => new RedisStateStore({ url: REDIS_URL, prefix: uniquePrefix() }));

describe('RedisStateStore', () => {
  let redis: Redis;
  let prefix: string;

  beforeEach(() => {
    redis = new Redis(REDIS_URL);
    prefix = uniquePrefix();
  });

  afterEach(async () => {
    const leftovers = await redis.keys(`${prefix}*`);
    if (leftovers.length > 0) await redis.del(...leftovers);
    await redis.quit();
  });

  it('stores keys as `prefix:key` and clear() leaves none behind', async () => {
    const store = new RedisStateStore({ url: REDIS_URL, prefix });
    await store.set('k', 'v');
    await store.namespace('ns').queuePush('q', ['a']);
    const keys = (await redis.keys(`${prefix}:*`)).sort();
    expect(keys).toEqual([`${prefix}:k`, `${prefix}:ns:q`, `${prefix}:ns:q:~active`]);
    await store.clear();
    expect(await redis.keys(`${prefix}*`)).toEqual([]);
    await store.close();
  });

  it('matches its prefix literally when clearing', async () => {
    const globby = new RedisStateStore({ url: REDIS_URL, prefix: `${prefix}[*]` });
    const other = new RedisStateStore({ url: REDIS_URL, prefix: `${prefix}x` });
    await globby.set('k', '1');
    await other.set('k', '2');
    await globby.clear();
    expect(await globby.get('k')).toBeNull();
    expect(await other.get('k')).toBe('2');
    await Promise.all([globby.close(), other.close()]);
  });

  it('stays atomic across separate connections', async () => {
    const stores = Array.from({ length: 5 }, () => new RedisStateStore({ url: REDIS_URL, prefix }));
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => stores[i % stores.length].bitsTestAndSet('bloom', [[3, 33, 333]])),
    );
    expect(answers.flat().filter((allSet) => !allSet)).toHaveLength(1);
    await Promise.all(stores.map((s) => s.close()));
  });

  it('shares a client it was given without closing it', async () => {
    const store = new RedisStateStore({ client: redis, prefix });
    await store.set('k', 'v');
    await store.close();
    expect(await redis.get(`${prefix}:k`)).toBe('v');
  });
});
