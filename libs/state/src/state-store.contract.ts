import type { StateStore } from './state-store';

/**
 * The behaviour every StateStore driver must share, registered as jest tests. `make` builds a fresh, empty
 * store per test; after each test the store is cleared and closed, then `cleanup` runs.
 */
export function stateStoreContract(name: string, make: () => Promise<StateStore>, cleanup?: () => Promise<void>): void {
  describe(`StateStore contract: ${name}`, () => {
    let store: StateStore;

    beforeEach(async () => {
      store = await make();
    });

    afterEach(async () => {
      await store.clear();
      await store.close();
      await cleanup?.();
    });

    describe('strings', () => {
      it('gets, sets, overwrites and deletes', async () => {
        expect(await store.get('k')).toBeNull();
        await store.set('k', 'one');
        expect(await store.get('k')).toBe('one');
        await store.set('k', 'two');
        expect(await store.get('k')).toBe('two');
        await store.del('k');
        expect(await store.get('k')).toBeNull();
        await store.del('never-set');
      });

      it('expires a value after its ttl, and a later set without ttl keeps it', async () => {
        // 500 ms, not less: on a loaded machine (the cluster, four round trips) 50 ms ran out before the first read.
        await store.set('short', 'v', 500);
        await store.set('kept', 'v', 500);
        await store.set('kept', 'w');
        expect(await store.get('short')).toBe('v');
        await sleep(600);
        expect(await store.get('short')).toBeNull();
        expect(await store.get('kept')).toBe('w');
      });

      it('sets a value only when absent, atomically, until it expires', async () => {
        // 500 ms, not less: the third call must come before the first one's value expires, on a loaded cluster too.
        const answers = await Promise.all([store.setIfAbsent('once', 'a', 500), store.setIfAbsent('once', 'b', 500)]);
        expect(answers.sort()).toEqual([false, true]);
        expect(await store.setIfAbsent('once', 'c', 500)).toBe(false);
        await sleep(600);
        expect(await store.setIfAbsent('once', 'd', 500)).toBe(true);
        expect(await store.get('once')).toBe('d');
      });

      it('increments by one or by a given amount', async () => {
        expect(await store.incr('n')).toBe(1);
        expect(await store.incr('n', 5)).toBe(6);
        expect(await store.incr('n', -2)).toBe(4);
        expect(await store.get('n')).toBe('4');
        await store.set('text', 'abc');
        await expect(store.incr('text')).rejects.toThrow(/integer/);
      });
    });

    describe('hashes', () => {
      it('sets, gets, increments and lists fields', async () => {
        expect(await store.hashGet('h', 'f')).toBeNull();
        expect(await store.hashGetAll('h')).toEqual({});
        await store.hashSet('h', 'f', 'x');
        expect(await store.hashIncr('h', 'n')).toBe(1);
        expect(await store.hashIncr('h', 'n', 10)).toBe(11);
        expect(await store.hashGet('h', 'f')).toBe('x');
        expect(await store.hashGetAll('h')).toEqual({ f: 'x', n: '11' });
      });

      it('removes set members, answering how many are left', async () => {
        await store.setAdd('bundle', ['0', '1', '2']);
        expect(await store.setRemove('bundle', '1')).toBe(2);
        expect(await store.setRemove('bundle', '1')).toBe(2);
        expect(await Promise.all([store.setRemove('bundle', '0'), store.setRemove('bundle', '2')])).toEqual(expect.arrayContaining([1, 0]));
        expect(await store.setMembers('bundle')).toEqual([]);
        expect(await store.setRemove('never', 'x')).toBe(0);
        await Promise.all(['d1', 'd2', 'd3'].map((key) => store.set(key, 'x')));
        await store.delMany(['d1', 'd3', 'absent']);
        expect(await Promise.all(['d1', 'd2', 'd3'].map((key) => store.get(key)))).toEqual([null, 'x', null]);
        await store.setAdd('many', ['0', '1', '2', '3']);
        expect(await store.setRemove('many', ['0', '2', 'absent'])).toBe(2);
        expect(await store.setRemove('many', ['1', '3'])).toBe(0);
        expect(await store.setMembers('many')).toEqual([]);
      });

      it('adds 1 to each field in turn, answering each value after its increment', async () => {
        expect(await store.hashIncrEach('pages', [])).toEqual([]);
        await store.hashIncr('pages', 'a.test', 5);
        expect(await store.hashIncrEach('pages', ['a.test', 'b.test', 'a.test'])).toEqual([6, 1, 7]);
        expect(await store.hashGetAll('pages')).toEqual({ 'a.test': '7', 'b.test': '1' });
      });

      it('answers one field named many times, and concurrent calls, each with its own values', async () => {
        expect(await store.hashIncrEach('pages', ['a.test', 'a.test', 'a.test'])).toEqual([1, 2, 3]);
        const answers = await Promise.all(Array.from({ length: 20 }, () => store.hashIncrEach('pages', ['a.test', 'a.test'])));
        expect(answers.flat().sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i + 4));
        expect(await store.hashGet('pages', 'a.test')).toBe('43');
      });

      it('adds to many fields of a hash at once', async () => {
        await store.hashIncrMany('totals', new Map());
        expect(await store.hashGetAll('totals')).toEqual({});
        await store.hashIncr('totals', 'a', 2);
        expect(
          await store.hashIncrMany(
            'totals',
            new Map([
              ['a', 3],
              ['b', -1],
            ]),
          ),
        ).toEqual([5, -1]);
        await Promise.all(Array.from({ length: 20 }, () => store.hashIncrMany('totals', new Map([['c', 1]]))));
        expect(await store.hashGetAll('totals')).toEqual({ a: '5', b: '-1', c: '20' });
      });

      it('sets many fields of a hash at once', async () => {
        await store.hashSetMany('h', new Map());
        expect(await store.hashGetAll('h')).toEqual({});
        await store.hashSet('h', 'a', 'old');
        await store.hashSetMany(
          'h',
          new Map([
            ['a', 'new'],
            ['b', '2'],
            ['c:d', 'x y'],
          ]),
        );
        expect(await store.hashGetAll('h')).toEqual({ a: 'new', b: '2', 'c:d': 'x y' });
      });

      it('keeps a bounded hash to its most fields, however many writers set new ones at once', async () => {
        const answers = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((f) => store.hashSetBounded('jar', f, `v${f}`, 3, 60_000)));
        expect(answers.filter(Boolean)).toHaveLength(3);
        const kept = Object.keys(await store.hashGetAll('jar'));
        expect(kept).toHaveLength(3);
        // A full hash still takes a new value for a field it has; a field removed makes room.
        expect(await store.hashSetBounded('jar', kept[0], 'new', 3, 60_000)).toBe(true);
        expect(await store.hashGet('jar', kept[0])).toBe('new');
        await store.hashDelete('jar', [kept[1], 'never-there']);
        expect(await store.hashSetBounded('jar', 'z', 'vz', 3, 60_000)).toBe(true);
        expect(Object.keys(await store.hashGetAll('jar')).sort()).toEqual([kept[0], kept[2], 'z'].sort());
        await store.hashDelete('jar', [kept[0], kept[2], 'z']);
        expect(await store.hashGetAll('jar')).toEqual({});
        await store.hashDelete('no-hash', ['x']);
      });

      it('lets a bounded hash expire its ttl after the call that set the latest expiry, never sooner', async () => {
        await store.hashSetBounded('short', 'f', 'v', 5, 60);
        await store.hashSetBounded('long', 'f', 'v', 5, 60_000);
        // A shorter ttl later does not bring the expiry forward.
        await store.hashSetBounded('long', 'g', 'v', 5, 60);
        await sleep(100);
        expect(await store.hashGetAll('short')).toEqual({});
        expect(await store.hashGetAll('long')).toEqual({ f: 'v', g: 'v' });
        expect(await store.hashSetBounded('short', 'f', 'again', 5, 60_000)).toBe(true);
        expect(await store.hashGet('short', 'f')).toBe('again');
      });

      it('sets a field only if absent, telling the loser who won, atomically', async () => {
        expect(await store.hashSetIfAbsent('owners', 'k', 'first')).toBeNull();
        expect(await store.hashSetIfAbsent('owners', 'k', 'second')).toBe('first');
        const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => store.hashSetIfAbsent('owners', 'race', `r${i}`)));
        expect(answers.filter((a) => a === null)).toHaveLength(1);
        const winner = await store.hashGet('owners', 'race');
        expect(answers.filter((a) => a !== null).every((a) => a === winner)).toBe(true);
      });
    });

    describe('sets', () => {
      it('answers per member whether it was new', async () => {
        expect(await store.setAdd('s', [])).toEqual([]);
        expect(await store.setAdd('s', ['a', 'b', 'a'])).toEqual([true, true, false]);
        expect(await store.setAdd('s', ['b', 'c'])).toEqual([false, true]);
        expect(await store.setHas('s', 'c')).toBe(true);
        expect(await store.setHas('s', 'z')).toBe(false);
        expect((await store.setMembers('s')).sort()).toEqual(['a', 'b', 'c']);
        expect(await store.setMembers('empty')).toEqual([]);
      });

      it('admits a member once under concurrent adds', async () => {
        const answers = await Promise.all(Array.from({ length: 30 }, () => store.setAdd('s', ['m'])));
        expect(answers.flat().filter(Boolean)).toHaveLength(1);
      });
    });

    describe('many sets', () => {
      it('reads the members of many sets at once, an absent set as empty', async () => {
        expect(await store.setMembersMany([])).toEqual([]);
        await store.setAdd('s1', ['a', 'b']);
        await store.setAdd('s2', ['c']);
        const [s1, none, s2] = await store.setMembersMany(['s1', 'absent', 's2']);
        expect([s1.sort(), none, s2]).toEqual([['a', 'b'], [], ['c']]);
      });

      it('adds each member to its own set and answers per entry whether it was new', async () => {
        expect(await store.setAddMany([])).toEqual([]);
        await store.setAdd('s1', ['a']);
        const entries: [string, string][] = [
          ['s1', 'a'],
          ['s1', 'b'],
          ['s2', 'a'],
          ['s1', 'b'],
          ['s3', '12345678901234'],
        ];
        expect(await store.setAddMany(entries)).toEqual([false, true, true, false, true]);
        expect((await store.setMembers('s1')).sort()).toEqual(['a', 'b']);
        expect(await store.setMembers('s2')).toEqual(['a']);
        expect(await store.setHas('s3', '12345678901234')).toBe(true);
        expect(await store.setAdd('s2', ['a', 'c'])).toEqual([false, true]);
      });

      it('admits each member once under concurrent calls over overlapping sets', async () => {
        const entries: [string, string][] = Array.from({ length: 20 }, (_, i) => [`s${i % 7}`, `m${i}`]);
        const answers = await Promise.all(Array.from({ length: 30 }, (_, call) => store.setAddMany(call % 2 ? entries : [...entries].reverse())));
        expect(answers.flat().filter(Boolean)).toHaveLength(20);
      });

      it('keeps each set in the namespace it was added through', async () => {
        await store.namespace('a').setAddMany([['s', 'x']]);
        expect(await store.setHas('s', 'x')).toBe(false);
        expect(await store.setHas('a:s', 'x')).toBe(true);
      });
    });

    describe('queues', () => {
      it('goes active on the first push and idle when found empty', async () => {
        expect(await store.queuePush('q', ['a'])).toBe(true);
        expect(await store.queuePush('q', ['b', 'c'])).toBe(false);
        expect(await store.queueLength('q')).toBe(3);

        expect(await store.queueHeadOrIdle('q')).toBe('a');
        expect(await store.queueLength('q')).toBe(3); // the head stays in place
        expect(await store.queueRemoveHead('q', 'b')).toBe(false);
        expect(await store.queueLength('q')).toBe(3);

        for (const item of ['a', 'b', 'c']) {
          expect(await store.queueHeadOrIdle('q')).toBe(item);
          expect(await store.queueRemoveHead('q', item)).toBe(true);
        }
        // Emptied but not yet found empty: still active.
        expect(await store.queuePush('q', ['d'])).toBe(false);
        expect(await store.queueRemoveHead('q', 'd')).toBe(true);

        expect(await store.queueHeadOrIdle('q')).toBeNull();
        expect(await store.queueLength('q')).toBe(0);
        expect(await store.queueRemoveHead('q', 'd')).toBe(false);
        expect(await store.queuePush('q', ['e'])).toBe(true);
      });

      it('puts `front` items at the head, in their order', async () => {
        await store.queuePush('q', ['x', 'y']);
        expect(await store.queuePush('q', ['f1', 'f2'], true)).toBe(false);
        expect(await drain(store, 'q')).toEqual(['f1', 'f2', 'x', 'y']);
      });

      it('makes an empty push a no-op', async () => {
        expect(await store.queuePush('q', [])).toBe(false);
        expect(await store.queuePush('q', ['a'])).toBe(true);
      });

      it('activates an idle queue for exactly one of concurrent pushers', async () => {
        const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => store.queuePush('q', [`u${i}`])));
        expect(answers.filter(Boolean)).toHaveLength(1);
        expect(await store.queueLength('q')).toBe(30);
      });

      it('forgets the active mark when the queue is deleted', async () => {
        expect(await store.queuePush('q', ['a'])).toBe(true);
        await store.del('q');
        expect(await store.queueLength('q')).toBe(0);
        expect(await store.queuePush('q', ['a'])).toBe(true);
      });
    });

    describe('capped lists', () => {
      it('keeps the newest items first, never more than the cap, however many writers push at once', async () => {
        expect(await store.listHead('log', 10)).toEqual([]);
        await store.listPushCapped('log', ['1', '2'], 5);
        await store.listPushCapped('log', ['3'], 5);
        expect(await store.listHead('log', 10)).toEqual(['3', '2', '1']);
        await Promise.all(['4', '5', '6', '7'].map((item) => store.listPushCapped('log', [item], 5)));
        const kept = await store.listHead('log', 10);
        expect(kept).toHaveLength(5);
        expect(kept.slice(0, 4).sort()).toEqual(['4', '5', '6', '7']);
        expect(kept[4]).toBe('3');
        expect(await store.listHead('log', 2)).toEqual(kept.slice(0, 2));
        await store.listPushCapped('log', [], 5);
        expect(await store.listHead('log', 10)).toEqual(kept);
      });
    });

    describe('bits', () => {
      it('answers per group whether all its bits were already set', async () => {
        expect(await store.bitsTestAndSet('b', [[1, 5, 9]])).toEqual([false]);
        expect(await store.bitsTestAndSet('b', [[1, 5, 9]])).toEqual([true]);
        expect(await store.bitsTestAndSet('b', [[1, 5], [9, 100], [2]])).toEqual([true, false, false]);
        // Groups are applied in order: the second finds the bits the first just set.
        expect(
          await store.bitsTestAndSet('b', [
            [300, 301],
            [301, 300],
          ]),
        ).toEqual([false, true]);
        expect(await store.bitsTestAndSet('b', [[2 ** 20 + 3]])).toEqual([false]);
        expect(await store.bitCount('b')).toBe(8);
        expect(await store.bitCount('none')).toBe(0);
      });

      it('answers a step of thousands of URLs in order, each group seeing the bits of the groups before it', async () => {
        // 2,500 groups of 3: a URL's k bits, past any limit on the arguments of one command.
        const groups = Array.from({ length: 2500 }, (_, i) => [i * 3, i * 3 + 1, (i * 3 + 2) % 6000]);
        const answers = await store.bitsTestAndSet('b', groups);
        expect(answers.slice(0, 2000).every((all) => !all)).toBe(true);
        // From 2,000 on the third bit was set by a group before: still new, since the first two were not.
        expect(answers.slice(2000).every((all) => !all)).toBe(true);
        expect(await store.bitsTestAndSet('b', groups)).toEqual(groups.map(() => true));
        expect(
          await store.bitsTestAndSet('b', [
            [7499, 7500],
            [3, 4, 5],
          ]),
        ).toEqual([false, true]);
        expect(await store.bitCount('b')).toBe(7002);
      });

      it('refuses an offset past the highest bit a store holds (2^32 - 1), setting nothing', async () => {
        await expect(store.bitsTestAndSet('b', [[1], [2 ** 32]])).rejects.toThrow(RangeError);
        expect(await store.bitCount('b')).toBe(0);
      });

      it('answers false to exactly one of 50 concurrent identical calls', async () => {
        const group = [7, 77, 777, 7777];
        const answers = await Promise.all(Array.from({ length: 50 }, () => store.bitsTestAndSet('b', [group])));
        expect(answers.flat().filter((allSet) => !allSet)).toHaveLength(1);
        expect(await store.bitCount('b')).toBe(4);
      });

      it('answers an empty group as all set, and sets nothing for it', async () => {
        expect(await store.bitsTestAndSet('b', [[3], [], [0]])).toEqual([false, true, false]);
        expect(await store.bitsTestAndSet('b', [[]])).toEqual([true]);
        expect(await store.bitCount('b')).toBe(2);
      });
    });

    describe('namespaces', () => {
      it('isolates keys under `prefix:`', async () => {
        const a = store.namespace('a');
        const b = store.namespace('b');
        await a.set('k', 'in-a');
        await a.namespace('x').set('k', 'in-a-x');
        expect(await b.get('k')).toBeNull();
        expect(await store.get('k')).toBeNull();
        expect(await store.get('a:k')).toBe('in-a');
        expect(await store.get('a:x:k')).toBe('in-a-x');
        expect(await a.queuePush('q', ['1'])).toBe(true);
        expect(await b.queuePush('q', ['1'])).toBe(true);
      });

      it('clears only its own keys', async () => {
        const a = store.namespace('a');
        const b = store.namespace('b');
        await a.set('k', '1');
        await a.queuePush('q', ['1']);
        await a.bitsTestAndSet('bits', [[1]]);
        await b.set('k', '2');
        await store.set('root', '3');
        await a.clear();
        expect(await a.get('k')).toBeNull();
        expect(await a.bitCount('bits')).toBe(0);
        expect(await a.queuePush('q', ['1'])).toBe(true);
        expect(await b.get('k')).toBe('2');
        expect(await store.get('root')).toBe('3');

        await store.clear();
        expect(await b.get('k')).toBeNull();
        expect(await store.get('root')).toBeNull();
      });

      it('closing a view leaves the shared store open', async () => {
        const a = store.namespace('a');
        await a.close();
        await store.set('k', 'v');
        expect(await store.get('k')).toBe('v');
      });
    });
  });
}

async function drain(store: StateStore, key: string): Promise<string[]> {
  const items: string[] = [];
  for (let head = await store.queueHeadOrIdle(key); head !== null; head = await store.queueHeadOrIdle(key)) {
    items.push(head);
    await store.queueRemoveHead(key, head);
  }
  return items;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
