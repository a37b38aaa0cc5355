import type { FrontierStoreOptions } from './frontier-store';
import { MemoryFrontierStore } from './memory-frontier-store.driver';
import { SHARD_LOOK_MS, ShardedFrontierStore, splitEvenly } from './sharded-frontier-store.driver';

const OPTIONS: FrontierStoreOptions = { frontQueues: 2, backQueues: 256, priorityBias: 2, auditLength: 5, perHostLimit: 1, perIpLimit: 100, perIpIntervalMs: 0 };
const T = 1_000_000;

/** Two memory shards; a host named `<shard>-<n>` lives in shard <shard>. */
function twoShards() {
  const shards = [new MemoryFrontierStore(OPTIONS), new MemoryFrontierStore(OPTIONS)];
  const store = new ShardedFrontierStore(shards, (host) => Number(host.split('-')[0]));
  return { store, shards };
}

const manyHosts = (shard: number, n: number) => Array.from({ length: n }, (_, i) => ({ host: `${shard}-${i}`, priority: 0, item: `${shard}-${i}/1` }));
const shardsOf = (hosts: string[]) => hosts.map((h) => Number(h.split('-')[0]));

describe('splitEvenly', () => {
  it('splits a count over shards, the first ones taking the remainder', () => {
    expect([...splitEvenly(10, [2, 0, 1])]).toEqual([
      [2, 4],
      [0, 3],
      [1, 3],
    ]);
    expect([...splitEvenly(2, [3, 1, 2, 0])]).toEqual([
      [3, 1],
      [1, 1],
    ]);
    expect(splitEvenly(0, [0, 1]).size).toBe(0);
    expect(splitEvenly(5, []).size).toBe(0);
  });
});

describe('ShardedFrontierStore, fair claims', () => {
  it('splits a claim evenly over two shards that both have many due hosts', async () => {
    const { store } = twoShards();
    await store.enqueue([...manyHosts(0, 100), ...manyHosts(1, 100)], T);
    const claims = await store.claim({ now: T, max: 10, leaseMs: 1000 });
    const counts = shardsOf(claims.map((c) => c.host));
    expect(counts.filter((s) => s === 0)).toHaveLength(5);
    expect(counts.filter((s) => s === 1)).toHaveLength(5);
  });

  it('alternates single claims between the shards', async () => {
    const { store } = twoShards();
    await store.enqueue([...manyHosts(0, 50), ...manyHosts(1, 50)], T);
    const order: number[] = [];
    for (let i = 0; i < 8; i++) order.push(...shardsOf((await store.claim({ now: T, max: 1, leaseMs: 1000 })).map((c) => c.host)));
    expect(order).toHaveLength(8);
    for (let i = 1; i < order.length; i++) expect(order[i]).not.toBe(order[i - 1]);
  });

  it('alternates single claims between the shards with promotions in between (as the dispatcher does)', async () => {
    const { store } = twoShards();
    await store.enqueue([...manyHosts(0, 50), ...manyHosts(1, 50)], T);
    const order: number[] = [];
    for (let i = 0; i < 8; i++) {
      await store.promoteDue(T, 10_000);
      order.push(...shardsOf((await store.claim({ now: T, max: 1, leaseMs: 1000 })).map((c) => c.host)));
    }
    expect(order.filter((s) => s === 0)).toHaveLength(4);
    expect(order.filter((s) => s === 1)).toHaveLength(4);
  });

  it('gives the whole claim to the one shard with due hosts, and asks no shard without', async () => {
    const { store, shards } = twoShards();
    await store.enqueue(manyHosts(1, 30), T);
    const asked = jest.spyOn(shards[0], 'claim');
    expect(await store.claim({ now: T, max: 20, leaseMs: 1000 })).toHaveLength(20);
    expect(await store.claim({ now: T, max: 20, leaseMs: 1000 })).toHaveLength(10);
    expect(asked).not.toHaveBeenCalled();
  });

  it('asks no shard whose enqueues and completions left nothing due (a busy host queued more, a host paced)', async () => {
    const { store, shards } = twoShards();
    await store.enqueue([...manyHosts(0, 1), ...manyHosts(1, 1)], T);
    const [a, b] = await store.claim({ now: T, max: 10, leaseMs: 1000 });
    const asked = shards.map((s) => jest.spyOn(s, 'claim'));
    // More URLs for the hosts in flight (one request per host at a time): nothing is due.
    await store.enqueue(
      [
        { host: '0-0', priority: 0, item: '0-0/2' },
        { host: '1-0', priority: 0, item: '1-0/2' },
      ],
      T,
    );
    expect(await store.claim({ now: T, max: 10, leaseMs: 1000 })).toEqual([]);
    // Completed, each host is due again after its delay, not before.
    await store.complete(a.leaseId, { nextAt: T + 500 }, T);
    await store.complete(b.leaseId, { nextAt: T + 500 }, T);
    expect(await store.claim({ now: T + 100, max: 10, leaseMs: 1000 })).toEqual([]);
    expect(asked.map((spy) => spy.mock.calls.length)).toEqual([0, 0]);
    expect(await store.claim({ now: T + 500, max: 10, leaseMs: 1000 })).toHaveLength(2);
    expect(asked.map((spy) => spy.mock.calls.length)).toEqual([1, 1]);
  });

  it('marks lease ids with their shard, so a completion finds its lease', async () => {
    const { store, shards } = twoShards();
    await store.enqueue([...manyHosts(0, 1), ...manyHosts(1, 1)], T);
    const claims = await store.claim({ now: T, max: 10, leaseMs: 1000 });
    expect(claims.map((c) => c.leaseId.split('.')[0]).sort()).toEqual(['0', '1']);
    for (const c of claims) expect(await store.complete(c.leaseId, { nextAt: T }, T)).toBe(true);
    expect(await Promise.all(shards.map((s) => s.counts()))).toEqual([
      { leased: 0, fetched: 0 },
      { leased: 0, fetched: 0 },
    ]);
    expect(await store.complete('7.1', { nextAt: T }, T)).toBe(false);
  });

  it('sums counts and stats over the shards, front queues elementwise', async () => {
    const { store } = twoShards();
    await store.enqueue([...manyHosts(0, 3), ...manyHosts(1, 2)], T);
    await store.claim({ now: T, max: 1, leaseMs: 1000 });
    expect(await store.stats()).toMatchObject({ size: 5, leased: 1, backQueuesInUse: 5, backQueuesFree: 2 * 256 - 5, front: [0, 0] });
    expect((await store.counts()).leased).toBe(1);
  });

  it("learns a shard's next due time from its claims, enqueues and completions, with no read of its own", async () => {
    const { store, shards } = twoShards();
    await store.enqueue([...manyHosts(0, 2), ...manyHosts(1, 1)], T);
    const reads = shards.map((s) => jest.spyOn(s, 'nextDueAt'));
    const [claim] = await store.claim({ now: T, max: 1, leaseMs: 1000 });
    expect(await store.complete(claim.leaseId, { nextAt: T + 10 }, T)).toBe(true);
    await store.enqueue(manyHosts(0, 1), T);
    expect(reads.map((r) => r.mock.calls.length)).toEqual([0, 0]);
  });

  it('reads the shards once for stats asked while a reading is under way, and afresh after it', async () => {
    const { store, shards } = twoShards();
    const asked = shards.map((s) => jest.spyOn(s, 'stats'));
    await store.enqueue(manyHosts(0, 2), T);
    const [a, b] = await Promise.all([store.stats(), store.stats()]);
    expect(a).toBe(b);
    expect(asked.map((s) => s.mock.calls.length)).toEqual([1, 1]);
    await store.enqueue(manyHosts(1, 1), T);
    expect((await store.stats()).size).toBe(3);
    expect(asked.map((s) => s.mock.calls.length)).toEqual([2, 2]);
  });
});

describe('ShardedFrontierStore, promotions and the next due time from its views', () => {
  it('asks only the shards with set-aside URLs due, until their views grow stale', async () => {
    const { store, shards } = twoShards();
    await store.schedule([{ host: '1-0', priority: 0, item: '1-0/again', dueAt: T + 500 }]);
    const asked = shards.map((s) => jest.spyOn(s, 'promoteDue'));
    expect(await store.promoteDue(T, 100)).toBe(0);
    expect(await store.promoteDue(T + 100, 100)).toBe(0);
    expect(asked.map((a) => a.mock.calls.length)).toEqual([0, 0]);
    expect(await store.promoteDue(T + 500, 100)).toBe(1);
    expect(asked.map((a) => a.mock.calls.length)).toEqual([0, 1]);
  });

  it('promotes a retry this process set aside at its due time, and one set aside elsewhere within SHARD_LOOK_MS', async () => {
    const { store, shards } = twoShards();
    await store.enqueue(manyHosts(0, 1), T);
    expect(await store.promoteDue(T, 100)).toBe(0);
    const [c] = await store.claim({ now: T, max: 1, leaseMs: 1000 });
    await store.complete(c.leaseId, { nextAt: T + 10, retryLater: { item: '0-0/retry', priority: 0, dueAt: T + 200 } }, T);
    expect(await store.promoteDue(T + 200, 100)).toBe(1);
    // Another replica sets a URL aside in shard 1, behind this store's back: seen once the view is stale.
    await shards[1].schedule([{ host: '1-0', priority: 0, item: '1-0/again', dueAt: T + 300 }]);
    expect(await store.promoteDue(T + 300, 100)).toBe(0);
    expect(await store.promoteDue(T + 200 + SHARD_LOOK_MS, 100)).toBe(1);
  });

  it('answers the next due time from fresh views without asking the shards', async () => {
    const { store, shards } = twoShards();
    const now = Date.now();
    await store.enqueue([...manyHosts(0, 1), ...manyHosts(1, 1)], now);
    await store.claim({ now, max: 10, leaseMs: 1000 });
    const asked = shards.map((s) => jest.spyOn(s, 'nextDueAt'));
    expect(await store.nextDueAt()).toBeNull();
    expect(asked.map((a) => a.mock.calls.length)).toEqual([0, 0]);
    await shards[1].enqueue(manyHosts(1, 2).slice(1), now);
    expect(await store.nextDueAt()).toBeNull();
    expect(await store.nextScheduledAt()).toBeNull();
  });
});

describe('ShardedFrontierStore, pruning', () => {
  it('bounds the whole frontier, dropping the lowest priority across shards first', async () => {
    const shards = [new MemoryFrontierStore({ ...OPTIONS, backQueues: 1 }), new MemoryFrontierStore({ ...OPTIONS, backQueues: 1 })];
    const store = new ShardedFrontierStore(shards, (host) => Number(host.split('-')[0]));
    // Each shard's one back queue goes to its first host: the rest wait in the front queues.
    await store.enqueue(
      [
        { host: '0-a', priority: 0, item: 'a' },
        { host: '1-a', priority: 0, item: 'a' },
      ],
      T,
    );
    await store.enqueue(
      [
        { host: '0-b', priority: 0, item: 'b' },
        { host: '0-c', priority: 1, item: 'c' },
        { host: '1-d', priority: 1, item: 'd' },
        { host: '1-e', priority: 1, item: 'e' },
        { host: '1-f', priority: 0, item: 'f' },
      ],
      T,
    );
    expect((await store.stats()).front).toEqual([2, 3]);
    expect(await store.prune(3)).toBe(2);
    // Queue 1 lost two of its three, whichever shard held them; queue 0 kept both.
    expect((await store.stats()).front).toEqual([2, 1]);
    expect(await store.prune(0)).toBe(3);
    expect((await store.stats()).front).toEqual([0, 0]);
  });
});
