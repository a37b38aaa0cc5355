import type { Cluster } from 'ioredis';
import { createRedis, SLOTS_REFRESH_MS, slotOf } from './redis-client';
import { REDIRECT_REFRESH_MS } from './redirect-refresh';

const CLUSTER_URL = process.env.REDIS_CLUSTER_URL || 'redis+cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002';
const key = (name: string) => `t-redirect-${process.pid}-${name}`;

/** The slot map's internals that a reshard changes under a client. */
type SlotMap = { slots: string[][]; _groupsBySlot: number[] };

describe('a cluster client with automatic pipelines re-reads its slot map when a command is redirected', () => {
  let cluster: Cluster;
  beforeEach(async () => {
    cluster = createRedis(CLUSTER_URL, { enableAutoPipelining: true }) as Cluster;
    await cluster.ping();
  });
  afterEach(() => cluster.quit());

  /** Two keys whose slots are served by different masters. */
  function keysOnTwoMasters(): [string, string] {
    const map = cluster as unknown as SlotMap;
    const first = key('a');
    for (let i = 0; ; i++) {
      const other = key(`b${i}`);
      if (map.slots[slotOf(other)][0] !== map.slots[slotOf(first)][0]) return [first, other];
    }
  }

  it('a MOVED answered to one command of a mixed pipeline mends the map at once, not at the periodic re-read', async () => {
    const map = cluster as unknown as SlotMap;
    const [here, moved] = keysOnTwoMasters();
    const owner = map.slots[slotOf(moved)][0];
    // As after a reshard the client has not heard of: `moved`'s slot believed to be on `here`'s master.
    map.slots[slotOf(moved)] = [...map.slots[slotOf(here)]];
    map._groupsBySlot[slotOf(moved)] = map._groupsBySlot[slotOf(here)];
    // Sent in one tick, so one automatic pipeline to one master: one command succeeds, the other is redirected.
    const [ok, redirected] = await Promise.allSettled([cluster.set(here, '1', 'PX', 10_000), cluster.set(moved, '1', 'PX', 10_000)]);
    expect(ok.status).toBe('fulfilled');
    expect(redirected).toMatchObject({ status: 'rejected', reason: expect.objectContaining({ message: expect.stringMatching(/^MOVED /) }) });
    const deadline = Date.now() + Math.min(2000, SLOTS_REFRESH_MS / 2);
    while (map.slots[slotOf(moved)][0] !== owner && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(map.slots[slotOf(moved)][0]).toBe(owner);
    await expect(cluster.set(moved, '2', 'PX', 10_000)).resolves.toBe('OK');
    await Promise.all([cluster.del(here), cluster.del(moved)]);
  });

  it('a burst of redirects re-reads the map once per REDIRECT_REFRESH_MS', async () => {
    const map = cluster as unknown as SlotMap;
    const [here, moved] = keysOnTwoMasters();
    let refreshes = 0;
    const refresh = cluster.refreshSlotsCache.bind(cluster);
    cluster.refreshSlotsCache = (callback) => {
      refreshes++;
      refresh(callback);
    };
    for (let i = 0; i < 5; i++) {
      map.slots[slotOf(moved)] = [...map.slots[slotOf(here)]];
      map._groupsBySlot[slotOf(moved)] = map._groupsBySlot[slotOf(here)];
      await Promise.allSettled([cluster.set(here, '1', 'PX', 10_000), cluster.set(moved, '1', 'PX', 10_000)]);
    }
    expect(refreshes).toBe(1);
    expect(REDIRECT_REFRESH_MS).toBeLessThan(SLOTS_REFRESH_MS);
    await new Promise((r) => refresh(r)); // the map as it is, for the clean-up
    await Promise.all([cluster.del(here), cluster.del(moved)]);
  });
});
