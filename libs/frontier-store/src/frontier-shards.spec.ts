import { CLUSTER_SLOTS, slotOf } from '@crawler/redis';
import { backQueuesPerShard, EARLIER_CLUSTER_SHARDS, shardOfHost, shardPrefixes, shardTags } from './frontier-shards';

describe('shardTags', () => {
  it.each([1, 3, EARLIER_CLUSTER_SHARDS, 256])('gives %i shards one tag each, near the middle of evenly spaced slot ranges', (count) => {
    const tags = shardTags(count);
    expect(new Set(tags).size).toBe(count);
    const spacing = CLUSTER_SLOTS / count;
    tags.forEach((tag, i) => {
      const slot = slotOf(`{${tag}}`);
      expect(slot).toBeGreaterThanOrEqual(Math.floor(i * spacing));
      expect(slot).toBeLessThan(Math.floor((i + 1) * spacing));
    });
  });

  it.each([16, EARLIER_CLUSTER_SHARDS, 128, 256])('spreads %i shards evenly over 3 to 30 masters that split the slots in contiguous ranges', (count) => {
    const slots = shardTags(count).map((tag) => slotOf(`{${tag}}`));
    for (let masters = 3; masters <= Math.min(30, count); masters++) {
      const perMaster = Array.from({ length: masters }, (_, m) => slots.filter((s) => Math.floor((s * masters) / CLUSTER_SLOTS) === m).length);
      expect(Math.max(...perMaster) - Math.min(...perMaster)).toBeLessThanOrEqual(1);
    }
  });

  it('is deterministic, so every process finds the same tags', () => {
    expect(shardTags(EARLIER_CLUSTER_SHARDS)).toEqual(shardTags(EARLIER_CLUSTER_SHARDS));
    // Pinned: changing how tags are found would strand every sharded crawl's keys.
    expect(shardTags(4)).toEqual(['f0-123', 'f1-59', 'f2-31', 'f3-15']);
  });

  it('refuses a count out of range, and a prefix that would open a hash tag', () => {
    expect(() => shardTags(0)).toThrow(RangeError);
    expect(() => shardTags(257)).toThrow(RangeError);
    expect(() => shardPrefixes('crawl:{x}:frontier', 4)).toThrow(/braces/);
    expect(shardPrefixes('crawl:frontier', 2)).toEqual(shardTags(2).map((tag) => `crawl:frontier:{${tag}}`));
  });
});

describe('shardOfHost', () => {
  it('is stable and keeps a site’s subdomains (and ports) together', () => {
    const shard = shardOfHost('example.com', 64);
    for (const host of ['www.example.com', 'a.b.example.com', 'example.com:8080', 'WWW.Example.com']) expect(shardOfHost(host, 64)).toBe(shard);
    expect(shardOfHost('example.com', 64)).toBe(shard);
  });

  it('uses the address of an IP literal', () => {
    expect(shardOfHost('10.0.0.1:8080', 64)).toBe(shardOfHost('10.0.0.1', 64));
    expect(shardOfHost('[::1]:8080', 64)).toBe(shardOfHost('[::1]', 64));
  });

  it('spreads sites over the shards', () => {
    const counts = new Array(16).fill(0);
    for (let i = 0; i < 16_000; i++) counts[shardOfHost(`site-${i}.test`, 16)]++;
    expect(Math.min(...counts)).toBeGreaterThan(800);
    expect(Math.max(...counts)).toBeLessThan(1200);
  });

  it('puts every host in shard 0 of one', () => expect(shardOfHost('anything.example', 1)).toBe(0));
});

describe('backQueuesPerShard', () => {
  it('divides the back queues, rounding up, at least one', () => {
    expect(backQueuesPerShard(1024, 64)).toBe(16);
    expect(backQueuesPerShard(1000, 64)).toBe(16);
    expect(backQueuesPerShard(8, 64)).toBe(1);
    expect(backQueuesPerShard(8, 1)).toBe(8);
  });
});
