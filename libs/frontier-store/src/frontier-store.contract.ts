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

    it('keeps each host’s order when one batch brings more hosts than free back queues', async () => {
      const s = await store({ backQueues: 3 });
      const hosts = ['a', 'b', 'c', 'd', 'e'].map((h) => `${h}.site.test`);
      // Interleaved: the back queues run out at the third host, while the first two still have URLs to come.
      await s.enqueue(
        [1, 2, 3].flatMap((n) => hosts.map((host) => item(host, n))),
        T,
      );
      expect(await s.stats()).toMatchObject({ size: 15, backQueuesInUse: 3 });
      const handed = new Map<string, string[]>();
      for (let round = 0, now = T; round < 40 && [...handed.values()].flat().length < 15; round++, now += 10) {
        for (const c of await claimAll(s, now)) {
          handed.set(c.host, [...(handed.get(c.host) ?? []), c.item]);
          expect(await s.complete(c.leaseId, { nextAt: now + 10, fetched: true }, now)).toBe(true);
        }
      }
      for (const host of hosts) expect(handed.get(host)).toEqual([1, 2, 3].map((n) => `${host}/${n}`));
      expect(await s.stats()).toMatchObject({ size: 0, front: [0, 0, 0, 0], backQueuesInUse: 0 });
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

    /**
     * `hosts` hosts on `ip`, past their resolve turns, each reporting the registrable domain `siteOf(i)`. They
     * are subdomains of one site (a sharded store keeps them in one shard); the domains they report stand for
     * distinct sites: the store counts what the frontier tells it.
     */
    const onOneAddress = async (s: FrontierStore, ip: string, hosts: number, siteOf: (i: number) => string) => {
      const names = Array.from({ length: hosts }, (_, i) => `h${i}.site.test`);
      await s.enqueue(
        names.flatMap((host) => [item(host, 1), item(host, 2)]),
        T,
      );
      const resolveTurns = await claimAll(s);
      expect(resolveTurns).toHaveLength(hosts);
      for (const c of resolveTurns) await s.complete(c.leaseId, { nextAt: T, requeue: c.item, ip, site: siteOf(names.indexOf(c.host)) }, T);
    };

    it('does not let a crowd of hosts held back by a busy address keep a host of its own address waiting', async () => {
      const s = await store({ backQueues: 512, perIpLimit: 1, perIpIntervalMs: 0 });
      const crowd = Array.from({ length: 300 }, (_, i) => `h${i}.site.test`);
      await s.enqueue(
        crowd.flatMap((host) => [item(host, 1), item(host, 2)]),
        T,
      );
      // Each host is handed out once without an address (to be resolved). The one request among the claims
      // holds 10.0.0.7 throughout: the other 299 wait for it, claim after claim.
      let busy: { ip?: string } | undefined;
      for (let turns = await claimAll(s); turns.length; turns = await claimAll(s))
        for (const c of turns) {
          if (c.ip !== undefined) busy = c;
          else await s.complete(c.leaseId, { nextAt: T, requeue: c.item, ip: '10.0.0.7', site: 'site.test' }, T);
        }
      expect(busy?.ip).toBe('10.0.0.7');
      await s.enqueue([item('own.site.test', 1), item('own.site.test', 2)], T);
      const [own] = await claimAll(s);
      expect(own.host).toBe('own.site.test');
      await s.complete(own.leaseId, { nextAt: T + 1000, requeue: own.item, ip: '10.0.0.8', site: 'site.test' }, T);
      const claimed: string[] = [];
      for (let now = T + 50; now <= T + 1000; now += 50) claimed.push(...(await s.claim({ now, max: 1, leaseMs: 60_000 })).map((c) => c.host));
      // The host on its own address is due at T + 1000, and a claim then hands it out.
      expect(claimed).toEqual(['own.site.test']);
    });

    it('holds an address of few domains to the base per-IP rule', async () => {
      const s = await store({ perIpLimit: 100, perIpIntervalMs: 1000, perIpDomainsPerStep: 4, perIpMaxScale: 8 });
      await onOneAddress(s, '10.0.0.9', 4, (i) => `d${i}.test`);
      const first = await claimAll(s);
      expect(first).toHaveLength(1);
      expect(first[0].ipIntervalMs).toBe(1000);
      expect(await claimAll(s, T + 999)).toEqual([]);
      expect(await claimAll(s, T + 1000)).toHaveLength(1);
    });

    it('grows an address’s interval and in-flight limit with the distinct domains on it, up to the cap', async () => {
      // 7 domains, 2 a step: ⌈7/2⌉ = 4, capped at 3: 300 ms apart instead of 900.
      const paced = await store({ perIpLimit: 100, perIpIntervalMs: 900, perIpDomainsPerStep: 2, perIpMaxScale: 3 });
      await onOneAddress(paced, '10.0.0.9', 7, (i) => `d${i}.test`);
      const first = await claimAll(paced);
      expect(first.map((c) => c.ipIntervalMs)).toEqual([300]);
      expect(await claimAll(paced, T + 299)).toEqual([]);
      expect(await claimAll(paced, T + 300)).toHaveLength(1);
      // With no interval: 3 × FRONTIER_PER_IP_LIMIT (1) in flight at once.
      const capped = await store({ perIpLimit: 1, perIpIntervalMs: 0, perIpDomainsPerStep: 2, perIpMaxScale: 3 });
      await onOneAddress(capped, '10.0.0.9', 8, (i) => `d${i}.test`);
      const claims = await claimAll(capped);
      expect(claims).toHaveLength(3);
      await capped.complete(claims[0].leaseId, { nextAt: T }, T);
      expect(await claimAll(capped)).toHaveLength(1);
    });

    it('counts registrable domains, not hosts: one site’s many subdomains on an address keep the base rule', async () => {
      const s = await store({ perIpLimit: 1, perIpIntervalMs: 0, perIpDomainsPerStep: 2, perIpMaxScale: 3 });
      await onOneAddress(s, '10.0.0.9', 8, () => 'site.test');
      expect(await claimAll(s)).toHaveLength(1);
    });

    it('lifts the per-IP rule on a CDN range, and holds a strict range to the base rule whatever its domains', async () => {
      const ranges = {
        perIpLimit: 1,
        perIpIntervalMs: 1000,
        perIpDomainsPerStep: 2,
        perIpMaxScale: 3,
        perIpCdnCidrs: ['10.1.0.0/16', '10.3.0.0/16'],
        perIpStrictCidrs: ['10.3.0.0/24'],
      };
      const cdn = await store(ranges);
      await onOneAddress(cdn, '10.1.2.3', 6, () => 'site.test');
      const all = await claimAll(cdn);
      expect(all).toHaveLength(6);
      expect(new Set(all.map((c) => c.ipIntervalMs))).toEqual(new Set([0]));
      const strict = await store(ranges);
      await onOneAddress(strict, '10.3.0.7', 6, (i) => `d${i}.test`);
      const one = await claimAll(strict);
      expect(one.map((c) => c.ipIntervalMs)).toEqual([1000]);
      expect(await claimAll(strict, T + 999)).toEqual([]);
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

    describe('a host given its own in-flight limit (a site’s concurrency)', () => {
      const limited = (host: string, n: number, hostLimit?: number | null) => ({ ...item(host, n), hostLimit });
      const countBy = (claims: { host: string }[]) => {
        const counts: Record<string, number> = {};
        for (const c of claims) counts[c.host] = (counts[c.host] ?? 0) + 1;
        return counts;
      };

      it('holds it to its own limit from its first claim, above or below the crawl’s, the others to the crawl’s', async () => {
        const s = await store({ perHostLimit: 2, perIpLimit: 100 });
        await s.enqueue([...[1, 2, 3, 4].map((n) => limited('up', n, 3)), ...[1, 2, 3].map((n) => limited('down', n, 1)), ...[1, 2, 3].map((n) => item('crawl', n))], T);
        const claims = await claimAll(s);
        expect(countBy(claims)).toEqual({ up: 3, down: 1, crawl: 2 });
        // Like the crawl's limit: the host's URLs start together, the last one saying how many are out.
        expect(claims.filter((c) => c.host === 'up').map((c) => c.inFlight)).toEqual([1, 2, 3]);
        expect(await claimAll(s)).toEqual([]);
        expect((await s.hostInfo('up')).hostLimit).toBe(3);
        expect((await s.hostInfo('crawl')).hostLimit).toBeUndefined();
        // A completion frees one place; the host's delay runs from it to the next start.
        const up = claims.find((c) => c.host === 'up')!;
        await s.complete(up.leaseId, { nextAt: T + 500 }, T + 100);
        expect(await claimAll(s, T + 499)).toEqual([]);
        expect((await claimAll(s, T + 500)).map((c) => c.item)).toEqual(['up/4']);
      });

      it('changes with a completion: a raise lets more out at once, a cut holds the host until enough are back, null gives it the crawl’s', async () => {
        const s = await store();
        await s.enqueue(
          [1, 2, 3, 4, 5, 6].map((n) => item('a', n)),
          T,
        );
        const [first] = await claimAll(s);
        await s.complete(first.leaseId, { nextAt: T + 10, hostLimit: 3 }, T);
        const three = await claimAll(s, T + 10);
        expect(three.map((c) => c.item)).toEqual(['a/2', 'a/3', 'a/4']);
        await s.complete(three[0].leaseId, { nextAt: T + 20, hostLimit: 1 }, T + 10);
        expect(await claimAll(s, T + 20)).toEqual([]); // two still out, over the new limit of one
        await s.complete(three[1].leaseId, { nextAt: T + 20 }, T + 10);
        expect(await claimAll(s, T + 20)).toEqual([]);
        await s.complete(three[2].leaseId, { nextAt: T + 20 }, T + 10);
        const [fifth] = await claimAll(s, T + 20);
        expect(fifth.item).toBe('a/5');
        expect(await claimAll(s, T + 20)).toEqual([]);
        await s.complete(fifth.leaseId, { nextAt: T + 30, hostLimit: null }, T + 20);
        expect((await s.hostInfo('a')).hostLimit).toBeUndefined();
      });

      it('puts a host held at its old limit back in line when arriving URLs raise it', async () => {
        const s = await store();
        await s.enqueue([item('a', 1), item('a', 2), item('a', 3)], T);
        expect(await claimAll(s)).toHaveLength(1);
        await s.enqueue([limited('a', 4, 3)], T);
        expect((await claimAll(s)).map((c) => c.item)).toEqual(['a/2', 'a/3']);
        expect((await s.hostInfo('a')).inFlight).toBe(3);
      });

      it('holds turns without a URL to it, as claims', async () => {
        const s = await store({ perIpLimit: 100 });
        await s.enqueue([limited('a', 1, 2), item('a', 2)], T);
        expect(await claimAll(s)).toHaveLength(2);
        expect((await s.takeTurn('a', { now: T, ip: '10.0.0.1', leaseMs: 10_000 })).leaseId).toBeUndefined();
        await s.enqueue([limited('b', 1, 2)], T);
        expect(await claimAll(s)).toHaveLength(1);
        expect((await s.takeTurn('b', { now: T, ip: '10.0.0.2', leaseMs: 10_000 })).leaseId).toEqual(expect.any(String));
        expect((await s.takeTurn('b', { now: T, ip: '10.0.0.2', leaseMs: 10_000 })).leaseId).toBeUndefined();
      });
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

    it('lists the hosts it has served in name order, a page at a time, with how many there are', async () => {
      const s = await store({ backQueues: 64 });
      const sites = Array.from({ length: 30 }, (_, i) => `site-${String(i).padStart(2, '0')}.test`);
      await s.enqueue(
        sites.map((host) => item(host, 1)),
        T,
      );
      // A host keeps its place in the list after its queue is freed.
      for (const c of await claimAll(s)) await s.complete(c.leaseId, { nextAt: T }, T);
      expect(await s.knownHosts('', 10)).toEqual({ hosts: sites.slice(0, 10), total: 30 });
      expect(await s.knownHosts(sites[9], 10)).toEqual({ hosts: sites.slice(10, 20), total: 30 });
      expect(await s.knownHosts(sites[27], 10)).toEqual({ hosts: sites.slice(28), total: 30 });
      expect((await s.knownHosts(sites[29], 10)).hosts).toEqual([]);
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

    it('answers the URLs still to do as stats does: queued, scheduled and leased', async () => {
      const s = await store();
      const work = async () => {
        const { size, scheduled, leased } = await s.stats();
        expect(await s.work()).toEqual({ size, scheduled, leased });
        return { size, scheduled, leased };
      };
      expect(await work()).toEqual({ size: 0, scheduled: 0, leased: 0 });
      await s.enqueue([item('a', 1), item('a', 2), item('b', 1)], T);
      await s.schedule([{ host: 'c', priority: 0, item: 'c/1', dueAt: T + 60_000 }]);
      const [a] = await claimAll(s);
      expect(await work()).toEqual({ size: 3, scheduled: 1, leased: 2 });
      await s.complete(a.leaseId, { nextAt: T, fetched: true }, T);
      expect(await work()).toEqual({ size: 2, scheduled: 1, leased: 1 });
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

    describe('turns without a URL (a rendered page’s sub-requests)', () => {
      const turnAt = (s: FrontierStore, host: string, now: number, ip = '10.0.0.1', leaseMs = 10_000) => s.takeTurn(host, { now, ip, leaseMs });

      it('takes a turn when the host’s next time has come, and spaces the host’s next claim from its end', async () => {
        const s = await store();
        await s.enqueue([item('a', 1), item('a', 2)], T);
        const [c] = await claimAll(s);
        await s.complete(c.leaseId, { nextAt: T + 500 }, T);
        // The host's delay after the dispatched URL holds the turn too.
        expect(await turnAt(s, 'a', T + 499)).toEqual({ retryAt: T + 500 });
        const turn = await turnAt(s, 'a', T + 500);
        expect(turn.leaseId).toEqual(expect.any(String));
        expect((await s.hostInfo('a')).inFlight).toBe(1);
        // And the turn's rest holds the host's next URL.
        expect(await s.endTurn(turn.leaseId!, T + 800, T + 510)).toBe(true);
        expect(await s.endTurn(turn.leaseId!, T + 800, T + 510)).toBe(false);
        expect(await claimAll(s, T + 799)).toEqual([]);
        expect((await claimAll(s, T + 800)).map((x) => x.item)).toEqual(['a/2']);
        // A host the frontier has no URL of is paced by its turns alone.
        const first = await turnAt(s, 'cdn.test', T + 1000, '10.0.0.3');
        await s.endTurn(first.leaseId!, T + 1300, T + 1000);
        expect(await turnAt(s, 'cdn.test', T + 1299, '10.0.0.3')).toEqual({ retryAt: T + 1300 });
        expect((await turnAt(s, 'cdn.test', T + 1300, '10.0.0.3')).leaseId).toEqual(expect.any(String));
      });

      it('answers the host’s override and politeness memory with a turn, and obeys a block', async () => {
        const s = await store();
        await s.enqueue([item('a', 1)], T);
        const [c] = await claimAll(s);
        const politeness = { recentMs: [40], backoff: 0, delayMs: 2000, cause: 'floor' };
        await s.complete(c.leaseId, { nextAt: T, politeness }, T);
        await s.setHostControls('a', { delayMs: 3000, blockedUntil: T + 5000 }, T);
        expect(await turnAt(s, 'a', T)).toEqual({ retryAt: T + 5000 });
        expect(await turnAt(s, 'a', T + 5000)).toEqual({ leaseId: expect.any(String), delayMs: 3000, politeness });
        expect(await turnAt(s, 'b', T + 5000, '10.0.0.3')).toEqual({ leaseId: expect.any(String), delayMs: null, politeness: undefined });
      });

      it('is never taken while a dispatched URL of the host is in flight, nor a URL claimed while a turn is', async () => {
        const s = await store();
        await s.enqueue([item('a', 1), item('a', 2), item('a', 3)], T);
        const [c] = await claimAll(s);
        const refused = await turnAt(s, 'a', T);
        expect(refused.leaseId).toBeUndefined();
        expect((refused as { retryAt: number }).retryAt).toBeGreaterThan(T);
        await s.complete(c.leaseId, { nextAt: T + 10, fetched: true }, T);
        const turn = await turnAt(s, 'a', T + 10);
        expect(turn.leaseId).toEqual(expect.any(String));
        // Due, but busy with the turn: no claim until it ends, then the host's delay after it.
        expect(await claimAll(s, T + 10)).toEqual([]);
        expect(await claimAll(s, T + 1000)).toEqual([]);
        await s.endTurn(turn.leaseId!, T + 1100, T + 1000);
        expect(await s.nextDueAt()).toBe(T + 1100);
        expect((await claimAll(s, T + 1100)).map((x) => x.item)).toEqual(['a/2']);
        expect((await s.stats()).size).toBe(2); // a turn neither adds nor removes a URL
      });

      it('frees the host’s back queue when the turn that held it ends after its last URL', async () => {
        const s = await store({ backQueues: 1 });
        await s.enqueue([item('a.site.test', 1)], T);
        const [c] = await claimAll(s);
        const turnLater = turnAt(s, 'a.site.test', T);
        expect((await turnLater).leaseId).toBeUndefined();
        await s.complete(c.leaseId, { nextAt: T, fetched: true }, T);
        const turn = await turnAt(s, 'a.site.test', T);
        await s.enqueue([item('b.site.test', 1)], T);
        await s.endTurn(turn.leaseId!, T, T);
        expect(await s.stats()).toMatchObject({ backQueuesInUse: 1 });
        expect((await claimAll(s)).map((x) => x.item)).toEqual(['b.site.test/1']);
      });

      it('counts against the per-IP limit and interval, as a claim does', async () => {
        const s = await store({ perIpLimit: 1, perIpIntervalMs: 1000 });
        await s.enqueue([item('b.site.test', 1), item('b.site.test', 2)], T);
        const [resolve] = await claimAll(s);
        await s.complete(resolve.leaseId, { nextAt: T, requeue: resolve.item, ip: '10.0.0.9' }, T);
        // A sub-request to another host on b's address takes the address's one request in flight.
        const turn = await turnAt(s, 'a.site.test', T, '10.0.0.9');
        expect(turn.leaseId).toEqual(expect.any(String));
        expect(await claimAll(s, T + 5000)).toEqual([]);
        expect((await turnAt(s, 'c.site.test', T + 5000, '10.0.0.9')).leaseId).toBeUndefined();
        // The claim above found the address full and looks again a little later, as it does after a claim.
        await s.endTurn(turn.leaseId!, T + 5000, T + 5000);
        const [b] = await claimAll(s, (await s.nextDueAt())!);
        expect(b).toMatchObject({ item: 'b.site.test/1', ip: '10.0.0.9' });
        // The address's interval runs from the claim: a turn there waits it out.
        await s.complete(b.leaseId, { nextAt: T }, T + 6000);
        expect(await turnAt(s, 'c.site.test', T + 6500, '10.0.0.9')).toEqual({ retryAt: T + 7000 });
        expect((await turnAt(s, 'c.site.test', T + 7000, '10.0.0.9')).leaseId).toEqual(expect.any(String));
        // The interval also runs from a turn (and the turn holds the address's one request in flight).
        expect(await claimAll(s, T + 9000)).toEqual([]);
      });

      it('is held to the address’s allowance as its completions grew it', async () => {
        const s = await store({ perIpLimit: 1, perIpIntervalMs: 0, perIpDomainsPerStep: 2, perIpMaxScale: 3 });
        const hosts = ['h0.site.test', 'h1.site.test', 'h2.site.test', 'h3.site.test'];
        await s.enqueue(
          hosts.map((host) => item(host, 1)),
          T,
        );
        // Four registrable domains reported on 10.0.0.9: twice the base rule there.
        for (const c of await claimAll(s)) await s.complete(c.leaseId, { nextAt: T, ip: '10.0.0.9', site: `d${hosts.indexOf(c.host)}.test` }, T);
        expect((await turnAt(s, 'x.site.test', T, '10.0.0.9')).leaseId).toEqual(expect.any(String));
        expect((await turnAt(s, 'y.site.test', T, '10.0.0.9')).leaseId).toEqual(expect.any(String));
        expect((await turnAt(s, 'z.site.test', T, '10.0.0.9')).leaseId).toBeUndefined();
        // An address no completion reported keeps the base rule.
        expect((await turnAt(s, 'x.site.test', T, '10.0.0.10')).leaseId).toBeUndefined(); // x is busy
        expect((await turnAt(s, 'z.site.test', T, '10.0.0.10')).leaseId).toEqual(expect.any(String));
        expect((await turnAt(s, 'w.site.test', T, '10.0.0.10')).leaseId).toBeUndefined();
      });

      it('ends an expired turn when expired leases are reclaimed, freeing its host and address', async () => {
        const s = await store({ perIpLimit: 1 });
        await s.enqueue([item('a', 1)], T);
        const turn = await turnAt(s, 'a', T, '10.0.0.2', 100);
        expect(await claimAll(s, T)).toEqual([]);
        expect(await s.reclaimExpired(T + 99, T + 99)).toBe(0);
        expect(await s.reclaimExpired(T + 100, T + 200)).toBe(1);
        expect((await s.hostInfo('a')).inFlight).toBe(0);
        // The host rests as after an expired lease; the address is free again.
        expect(await claimAll(s, T + 199)).toEqual([]);
        expect((await claimAll(s, T + 200)).map((x) => x.item)).toEqual(['a/1']);
        expect((await turnAt(s, 'other', T + 200, '10.0.0.2')).leaseId).toEqual(expect.any(String));
        // Its holder's late end changes nothing.
        expect(await s.endTurn(turn.leaseId!, T + 90_000, T + 300)).toBe(false);
        expect(await s.counts()).toEqual({ leased: 1, fetched: 0 });
      });
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
