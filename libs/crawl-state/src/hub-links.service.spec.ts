import { loadConfig } from '@crawler/config';
import { CLUSTER_HASH_BUCKETS, MemoryStateStore } from '@crawler/state';
import { HubLinks } from './hub-links.service';

describe('HubLinks', () => {
  const pages = Array.from({ length: 40 }, (_, i) => `http://site-${i}.test/hub`);
  const fresh = pages.flatMap((referrer, i) => Array.from({ length: 1 + (i % 3) }, () => ({ referrer })));

  it('counts each page’s new links, in one hash on a Redis node', async () => {
    const state = new MemoryStateStore();
    const hubs = new HubLinks(state, loadConfig({}, { redisUrl: 'redis://127.0.0.1:6379' }));
    expect(await hubs.record(fresh)).toBe(0);
    expect(await Promise.all(pages.slice(0, 3).map((p) => hubs.count(p)))).toEqual([1, 2, 3]);
    expect(Object.keys(await state.namespace('hub-links').hashGetAll('counts'))).toHaveLength(pages.length);
  });

  it('spreads the counts over the buckets of a partitioned hash on a Redis Cluster, counting the same', async () => {
    const state = new MemoryStateStore();
    const hubs = new HubLinks(state, loadConfig({}, { redisUrl: 'redis+cluster://127.0.0.1:7000,127.0.0.1:7001' }));
    await hubs.record(fresh);
    expect(await Promise.all(pages.slice(0, 3).map((p) => hubs.count(p)))).toEqual([1, 2, 3]);
    const ns = state.namespace('hub-links');
    expect(await ns.hashGetAll('counts')).toEqual({});
    const buckets = await Promise.all(Array.from({ length: CLUSTER_HASH_BUCKETS }, (_, b) => ns.hashGetAll(`counts:${b}`)));
    expect(buckets.filter((b) => Object.keys(b).length > 0).length).toBeGreaterThan(20);
  });
});
