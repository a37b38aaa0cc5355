/// <reference types="jest" />
import type { FrontierStore, FrontierStoreOptions } from './frontier-store';

export const CONTRACT_OPTIONS: FrontierStoreOptions = {
  frontQueues: 4,
  backQueues: 8,
  priorityBias: 2,
  auditLength: 5,
  perHostLimit: 1,
  perIpLimit: 4,
  perIpIntervalMs: 0,
};

/**
 * A store with these options. On a sharded store `backQueues` is what the shard of the test's hosts gets:
 * hosts that compete for back queues or share an address are, in these tests, subdomains of one site, which
 * a sharded store keeps in one shard.
 */
export type MakeFrontierStore = (options?: Partial<FrontierStoreOptions>) => Promise<FrontierStore>;

const T = 1_000_000; // a fixed "now": the store takes time as an argument, so tests need no clock
const item = (host: string, n: number, priority = 0) => ({ host, priority, item: `${host}/${n}` });
const claimAll = (store: FrontierStore, now = T, max = 100) => store.claim({ now, max, leaseMs: 10_000 });

/** The behaviour every frontier driver must have. */
export function frontierStoreContract(name: string, make: MakeFrontierStore) {
  describe(`FrontierStore contract: ${name}`, () => {
    let stores: FrontierStore[] = [];
    const store = async (options?: Partial<FrontierStoreOptions>) => {
      const s = await make(options);
      stores.push(s);
      return s;
    };
    afterEach(async () => {
      await Promise.all(stores.map((s) => s.close()));
      stores = [];
    });

    it('hands out a due host’s URLs in order, one at a time per host', async () => {
      const s = await store();
      await s.enqueue([item('a', 1), item('a', 2), item('b', 1)], T);
      const first = await claimAll(s);
      expect(first.map((c) => c.item).sort()).toEqual(['a/1', 'b/1']);
      expect(await claimAll(s)).toEqual([]);
      const a = first.find((c) => c.host === 'a')!;
      expect(await s.complete(a.leaseId, { nextAt: T + 500 }, T)).toBe(true);
      expect(await claimAll(s, T + 499)).toEqual([]);
      expect((await claimAll(s, T + 500)).map((c) => c.item)).toEqual(['a/2']);
    });

    it('says when each claimed host’s turn came, so that a dispatcher can tell how late it hands it out', async () => {
      const s = await store();
      await s.enqueue([item('a', 1), item('a', 2)], T);
      const [first] = await claimAll(s, T + 40);
      expect(first.dueAt).toBe(T);
      await s.complete(first.leaseId, { nextAt: T + 500 }, T + 100);
      const [second] = await claimAll(s, T + 700);
      expect(second.dueAt).toBe(T + 500);
    });

    it('answers false to a replayed completion and counts the frontier’s size', async () => {
      const s = await store();
      await s.enqueue([item('a', 1), item('a', 2)], T);
      expect((await s.stats()).size).toBe(2);
      const [c] = await claimAll(s);
      expect((await s.stats()).leased).toBe(1);
      expect(await s.complete(c.leaseId, { nextAt: T }, T)).toBe(true);
      expect(await s.complete(c.leaseId, { nextAt: T }, T)).toBe(false);
      expect(await s.complete('no-such-lease', { nextAt: T }, T)).toBe(false);
      expect((await s.stats()).size).toBe(1);
    });

    it('serves many sites at once and hands out each of their URLs exactly once', async () => {
      const s = await store({ backQueues: 64 });
      const sites = Array.from({ length: 40 }, (_, i) => `site-${i}.test`);
      await s.enqueue(
        sites.flatMap((host) => [item(host, 1), item(host, 2, 1), item(host, 3, 3)]),
        T,
      );
      const handed: string[] = [];
      for (let round = 0, now = T; round < 20 && handed.length < 120; round++, now += 10) {
        const claims = await claimAll(s, now);
        expect(new Set(claims.map((c) => c.host)).size).toBe(claims.length);
        for (const c of claims) {
          handed.push(c.item);
          expect(await s.complete(c.leaseId, { nextAt: now + 10, fetched: true }, now)).toBe(true);
        }
      }
      expect(handed.sort()).toEqual(sites.flatMap((host) => [`${host}/1`, `${host}/2`, `${host}/3`]).sort());
      expect(await s.counts()).toEqual({ leased: 0, fetched: 120 });
      expect(await s.stats()).toMatchObject({ size: 0, leased: 0, backQueuesInUse: 0, hostsDue: 0 });
      expect(await s.nextDueAt()).toBeNull();
      expect(await s.nextScheduledAt()).toBeNull();
    });

    it('enqueues a batch id once (a redelivered message adds nothing twice)', async () => {
      const s = await store();
      expect(await s.enqueue([item('a', 1), item('b', 1)], T, 'batch-1')).toBe(2);
      expect(await s.enqueue([item('a', 1), item('b', 1)], T, 'batch-1')).toBe(0);
      expect(await s.enqueue([item('c', 1)], T, 'batch-2')).toBe(1);
      expect(await s.enqueue([item('c', 2)], T)).toBe(1);
      expect((await s.stats()).size).toBe(4);
    });

    it('enqueues a redelivered batch larger than one script call exactly once', async () => {
      const s = await store({ backQueues: 64 });
      const batch = Array.from({ length: 4_500 }, (_, i) => item(`h${i % 50}`, i, i % 4));
      expect(await s.enqueue(batch, T, 'big')).toBe(4_500);
      expect(await s.enqueue(batch, T, 'big')).toBe(0);
      expect((await s.stats()).size).toBe(4_500);
    });

    it('holds scheduled recrawls until they are due, then queues them', async () => {
      const s = await store();
      await s.schedule([
        { host: 'a', priority: 1, item: 'a/again', dueAt: T + 1000 },
        { host: 'b', priority: 1, item: 'b/again', dueAt: T + 5000 },
      ]);
      expect(await s.stats()).toMatchObject({ size: 0, scheduled: 2 });
      expect(await s.nextScheduledAt()).toBe(T + 1000);
      expect(await s.promoteDue(T + 999, 100)).toBe(0);
      expect(await s.promoteDue(T + 1000, 100)).toBe(1);
      expect(await s.nextScheduledAt()).toBe(T + 5000);
      expect(await s.stats()).toMatchObject({ size: 1, scheduled: 1 });
      expect((await claimAll(s, T + 1000)).map((c) => c.item)).toEqual(['a/again']);
    });

    it('puts a requeued item back at the head of its host', async () => {
      const s = await store();
      await s.enqueue([item('a', 1), item('a', 2)], T);
      const [c] = await claimAll(s);
      await s.complete(c.leaseId, { nextAt: T + 10, requeue: c.item }, T);
      expect((await s.stats()).size).toBe(2);
      expect((await claimAll(s, T + 10)).map((x) => x.item)).toEqual(['a/1']);
    });

    it('holds an item to retry later until its due time, while its host goes on at its own pace', async () => {
      const s = await store();
      await s.enqueue([item('a', 1), item('a', 2)], T);
      const [c] = await claimAll(s);
      const retryLater = { item: 'a/1+retry', priority: 2, dueAt: T + 30_000 };
      expect(await s.complete(c.leaseId, { nextAt: T + 10, retryLater }, T)).toBe(true);
      // Counted as held, not queued; in the same step as the completion (a replay adds nothing).
      expect(await s.stats()).toMatchObject({ size: 1, scheduled: 1, leased: 0 });
      expect(await s.complete(c.leaseId, { nextAt: T + 10, retryLater }, T)).toBe(false);
      expect((await s.stats()).scheduled).toBe(1);
      // The host's next URL is not held up by the retry: it is due at the host's usual time.
      expect(await claimAll(s, T + 9)).toEqual([]);
      const [next] = await claimAll(s, T + 10);
      expect(next.item).toBe('a/2');
      await s.complete(next.leaseId, { nextAt: T + 20 }, T + 10);
      expect(await s.promoteDue(T + 29_999, 100)).toBe(0);
      expect(await s.promoteDue(T + 30_000, 100)).toBe(1);
      expect(await s.stats()).toMatchObject({ size: 1, scheduled: 0 });
      const [again] = await claimAll(s, T + 30_000);
      expect(again).toMatchObject({ host: 'a', item: 'a/1+retry' });
    });

    it('keeps the politeness of a host whose retry comes due before its next fetch time', async () => {
      const s = await store();
      await s.enqueue([item('a', 1)], T);
      const [c] = await claimAll(s);
      await s.complete(c.leaseId, { nextAt: T + 5_000, retryLater: { item: 'a/1+retry', priority: 0, dueAt: T + 1_000 } }, T);
      expect(await s.promoteDue(T + 1_000, 100)).toBe(1);
      expect(await claimAll(s, T + 4_999)).toEqual([]);
      expect((await claimAll(s, T + 5_000)).map((x) => x.item)).toEqual(['a/1+retry']);
    });

    it('serves no more hosts at once than it has back queues, and refills a freed one', async () => {
      const s = await store({ backQueues: 2 });
      await s.enqueue([item('a.site.test', 1), item('b.site.test', 1), item('c.site.test', 1)], T);
      const first = await claimAll(s);
      expect(first).toHaveLength(2);
      expect((await s.stats()).backQueuesInUse).toBe(2);
      await s.complete(first[0].leaseId, { nextAt: T }, T);
      const second = await claimAll(s);
      expect(second.map((c) => c.host)).toEqual(['c.site.test']);
    });

    it('routes higher-priority URLs first when back queues are scarce', async () => {
      const s = await store({ backQueues: 1, priorityBias: 1e9 });
      await s.enqueue([item('low.site.test', 1, 3), item('high.site.test', 1, 0), item('mid.site.test', 1, 1)], T);
      const order: string[] = [];
      for (let i = 0; i < 3; i++) {
        const [c] = await claimAll(s);
        order.push(c.host);
        await s.complete(c.leaseId, { nextAt: T }, T);
      }
      expect(order).toEqual(['high.site.test', 'mid.site.test', 'low.site.test']);
    });

    it('prunes its front queues to a bound: lowest priority first, newest first within one, never a routed or leased URL', async () => {
      const s = await store({ backQueues: 1, priorityBias: 1e9 });
      await s.enqueue([item('a.site.test', 1, 3)], T);
      const [a] = await claimAll(s);
      // a holds the one back queue (leased): everything below waits in the front queues.
      await s.enqueue([item('b.site.test', 1, 1), item('c.site.test', 1, 3), item('d.site.test', 1, 3), item('e.site.test', 1, 2), item('f.site.test', 1, 0)], T);
      expect(await s.prune(10)).toBe(0);
      expect(await s.prune(3)).toBe(2);
      expect((await s.stats()).front).toEqual([1, 1, 1, 0]);
      expect((await s.stats()).size).toBe(4);
      expect(await s.prune(1)).toBe(2);
      expect(await s.prune(0)).toBe(1);
      expect((await s.stats()).front).toEqual([0, 0, 0, 0]);
      // The leased URL was not touched; a new URL is queued and served as usual.
      expect(await s.complete(a.leaseId, { nextAt: T }, T)).toBe(true);
      await s.enqueue([item('g.site.test', 1, 3)], T);
      expect((await claimAll(s)).map((c) => c.item)).toEqual(['g.site.test/1']);
    });

    it('prunes the newest of the lowest queue first', async () => {
      const s = await store({ backQueues: 1, priorityBias: 1e9 });
      await s.enqueue([item('a.site.test', 1, 0)], T);
      const [a] = await claimAll(s);
      await s.enqueue([item('b.site.test', 1, 3), item('c.site.test', 1, 3), item('d.site.test', 1, 3)], T);
      expect(await s.prune(1)).toBe(2);
      await s.complete(a.leaseId, { nextAt: T }, T);
      expect((await claimAll(s)).map((c) => c.item)).toEqual(['b.site.test/1']);
    });

    it('appends URLs of a host that already has a back queue to it', async () => {
      const s = await store({ backQueues: 1 });
      await s.enqueue([item('a.site.test', 1)], T);
      const [c] = await claimAll(s);
      await s.enqueue([item('b.site.test', 1), item('a.site.test', 2)], T);
      await s.complete(c.leaseId, { nextAt: T }, T);
      // b waits in a front queue; a/2 reached a's back queue as the router passed it, or after a released it.
      const next = await claimAll(s);
      expect(next).toHaveLength(1);
    });

    it('returns expired leases to their hosts, and reclaims by predicate', async () => {
      const s = await store();
      await s.enqueue([item('a', 1), item('b', 1)], T);
      await s.claim({ now: T, max: 10, leaseMs: 100 });
      expect(await s.reclaimExpired(T + 50, T + 50)).toBe(0);
      expect(await s.reclaimExpired(T + 100, T + 200)).toBe(2);
      expect(await claimAll(s, T + 199)).toEqual([]);
      const again = await claimAll(s, T + 200);
      expect(again.map((c) => c.item).sort()).toEqual(['a/1', 'b/1']);
      expect(await s.reclaimWhere((c) => c.host === 'a', T + 200, T + 300)).toBe(1);
      expect((await s.stats()).leased).toBe(1);
      expect((await claimAll(s, T + 300)).map((c) => c.item)).toEqual(['a/1']);
    });

    it('paces hosts sharing an address and caps their requests in flight', async () => {
      const s = await store({ perIpIntervalMs: 1000, perIpLimit: 1 });
      await s.enqueue([item('a.site.test', 1), item('a.site.test', 2), item('b.site.test', 1), item('b.site.test', 2)], T);
      const first = await claimAll(s);
      for (const c of first) await s.complete(c.leaseId, { nextAt: T, ip: '10.0.0.9' }, T);
      // Both hosts are due, but they share 10.0.0.9: one now, the other a full interval later.
      const now = await claimAll(s, T + 1000);
      expect(now).toHaveLength(1);
      expect(now[0].ip).toBe('10.0.0.9');
      expect(await claimAll(s, T + 1999)).toEqual([]);
      await s.complete(now[0].leaseId, { nextAt: T + 1000 }, T + 1000);
      expect(await claimAll(s, T + 2000)).toHaveLength(1);
    });

    it('holds never-fetched hosts on one address to its limit from their first request (after a resolve turn)', async () => {
      const s = await store({ backQueues: 32, perIpLimit: 1, perIpIntervalMs: 0 });
      await s.enqueue(Array.from({ length: 20 }, (_, i) => [item(`new${i}.site.test`, 1), item(`new${i}.site.test`, 2)]).flat(), T);
      // Nothing is known of these hosts: each is handed out once without an address, to be resolved, not fetched.
      const resolveTurns = await claimAll(s);
      expect(resolveTurns).toHaveLength(20);
      expect(resolveTurns.every((c) => c.ip === undefined)).toBe(true);
      for (const c of resolveTurns) await s.complete(c.leaseId, { nextAt: T, requeue: c.item, ip: '10.0.0.7' }, T);
      // From now on every claim is a request to 10.0.0.7: one at a time, 40 in all.
      const requested: string[] = [];
      for (let round = 0, now = T; requested.length < 40 && round < 200; round++) {
        now = Math.max(now + 1, (await s.nextDueAt()) ?? now);
        const claims = await claimAll(s, now);
        expect(claims.length).toBeLessThanOrEqual(1);
        for (const c of claims) {
          expect(c.ip).toBe('10.0.0.7');
          requested.push(c.item);
          await s.complete(c.leaseId, { nextAt: now, ip: '10.0.0.7' }, now);
        }
      }
      expect(new Set(requested).size).toBe(40);
    });

    it('obeys host controls: block until, budget, purge', async () => {
      const s = await store();
      await s.enqueue([item('a', 1), item('a', 2), item('a', 3), item('b', 1), item('b', 2)], T);
      await s.setHostControls('a', { blockedUntil: T + 5000 }, T);
      expect((await claimAll(s)).map((c) => c.host)).toEqual(['b']);
      expect((await s.hostInfo('a')).blockedUntil).toBe(T + 5000);
      await s.setHostControls('a', { blockedUntil: null, budget: 1 }, T);
      const [a] = (await claimAll(s)).filter((c) => c.host === 'a');
      await s.complete(a.leaseId, { nextAt: T, fetched: true }, T);
      expect(await claimAll(s, T + 1)).toEqual([]); // budget spent: a's other URLs are dropped
      expect((await s.hostInfo('a')).queued).toBe(0);
      expect(await s.purgeHost('b', T)).toBe(1);
      expect((await s.stats()).size).toBe(1); // b/1 still leased
    });

    it('reports a host’s state and keeps a bounded audit log', async () => {
      const s = await store();
      await s.enqueue([item('a', 1), item('a', 2)], T);
      const [c] = await claimAll(s);
      const politeness = { recentMs: [12], backoff: 0, delayMs: 700, cause: 'floor' };
      await s.complete(c.leaseId, { nextAt: T + 700, ip: '127.0.0.1', fetched: true, politeness }, T);
      await s.setHostControls('a', { delayMs: 900 }, T);
      expect(await s.hostInfo('a')).toMatchObject({ host: 'a', queued: 1, inFlight: 0, nextAt: T + 700, fetched: 1, ip: '127.0.0.1', delayMs: 900, politeness });
      expect(await s.nextDueAt()).toBe(T + 700);
      await s.audit('a', ['1', '2', '3', '4', '5', '6', '7']);
      expect(await s.auditLog('a')).toEqual(['3', '4', '5', '6', '7']);
      await s.auditMany(
        new Map([
          ['a', ['8']],
          ['b', ['x', 'y']],
          ['c', []],
          ['d e\t', Array.from({ length: 9 }, (_, i) => `${i}`)],
        ]),
      );
      expect(await s.auditLog('a')).toEqual(['4', '5', '6', '7', '8']);
      expect(await s.auditLog('b')).toEqual(['x', 'y']);
      expect(await s.auditLog('c')).toEqual([]);
      expect(await s.auditLog('d e\t')).toEqual(['4', '5', '6', '7', '8']);
    });

    it('counts leases and fetched pages crawl-wide, and answers a host’s politeness in one read', async () => {
      const s = await store();
      expect(await s.counts()).toEqual({ leased: 0, fetched: 0 });
      expect(await s.politeness('a')).toEqual({ politeness: undefined, delayMs: null });
      await s.enqueue([item('a', 1), item('b', 1), item('c', 1)], T);
      const [a, b, c] = await claimAll(s);
      expect(await s.counts()).toEqual({ leased: 3, fetched: 0 });
      const politeness = { recentMs: [12], backoff: 0, delayMs: 700, cause: 'floor' };
      await s.complete(a.leaseId, { nextAt: T + 700, fetched: true, politeness }, T);
      await s.complete(b.leaseId, { nextAt: T, fetched: false }, T);
      expect(await s.counts()).toEqual({ leased: 1, fetched: 1 });
      await s.setHostControls(a.host, { delayMs: 900 }, T);
      expect(await s.politeness(a.host)).toEqual({ politeness, delayMs: 900 });
      await s.complete(c.leaseId, { nextAt: T, fetched: true }, T);
      expect((await s.counts()).fetched).toBe(2);
    });

    it('appends a completion’s audit entries to its host’s log, bounded, only when the completion counts', async () => {
      const s = await store();
      await s.enqueue([item('a', 1)], T);
      const [c] = await claimAll(s);
      await s.audit('a', ['1', '2']);
      expect(await s.complete(c.leaseId, { nextAt: T, audit: ['3', '4', '5', '6'] }, T)).toBe(true);
      expect(await s.complete(c.leaseId, { nextAt: T, audit: ['stale'] }, T)).toBe(false);
      expect(await s.auditLog('a')).toEqual(['2', '3', '4', '5', '6']);
    });

    it('never hands one host to two concurrent claimers', async () => {
      const s = await store({ backQueues: 64 });
      await s.enqueue(Array.from({ length: 50 }, (_, i) => [item(`h${i}`, 1), item(`h${i}`, 2)]).flat(), T);
      const claims = (await Promise.all(Array.from({ length: 20 }, () => s.claim({ now: T, max: 10, leaseMs: 1000 })))).flat();
      const hosts = claims.map((c) => c.host);
      expect(new Set(hosts).size).toBe(hosts.length);
      expect(hosts).toHaveLength(50);
    });
  });
}
