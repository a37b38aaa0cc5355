import { randomBytes } from 'node:crypto';
import { CONTRACT_OPTIONS, frontierStoreContract } from './frontier-store.contract';
import { MemoryFrontierStore } from './memory-frontier-store.driver';
import { RedisFrontierStore } from './redis-frontier-store.driver';

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

frontierStoreContract('memory', async (options) => new MemoryFrontierStore({ ...CONTRACT_OPTIONS, ...options }));

frontierStoreContract('redis', async (options) => {
  const store = new RedisFrontierStore({ url: REDIS_URL, prefix: `test-frontier-${randomBytes(4).toString('hex')}` }, { ...CONTRACT_OPTIONS, ...options });
  const close = store.close.bind(store);
  store.close = async () => {
    await store.clear();
    await close();
  };
  return store;
});

describe('RedisFrontierStore', () => {
  it('keeps its state across instances (a restarted frontier resumes)', async () => {
    const prefix = `test-frontier-${randomBytes(4).toString('hex')}`;
    const first = new RedisFrontierStore({ url: REDIS_URL, prefix }, CONTRACT_OPTIONS);
    await first.enqueue([{ host: 'a', priority: 0, item: 'a/1' }, { host: 'a', priority: 0, item: 'a/2' }], 1000);
    const [lease] = await first.claim({ now: 1000, max: 10, leaseMs: 100 });
    await first.close();
    const second = new RedisFrontierStore({ url: REDIS_URL, prefix }, CONTRACT_OPTIONS);
    expect((await second.stats()).size).toBe(2);
    expect(await second.reclaimExpired(1100, 1100)).toBe(1);
    const claims = await second.claim({ now: 1100, max: 10, leaseMs: 100 });
    expect(claims.map((c) => c.item)).toEqual([lease.item]);
    await second.clear();
    await second.close();
  });
});
