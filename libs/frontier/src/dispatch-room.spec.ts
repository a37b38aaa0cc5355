import { COUNTS_READ_MS, COUNTS_REREAD_MS, DispatchRoom } from './dispatch-room';
import { DispatchSignal } from './dispatch-signal';

/** A store whose counts the test sets, counting the reads. */
function countsStore(leased = 0, fetched = 0) {
  const store = { leased, fetched, reads: 0, counts: async () => (store.reads++, { leased: store.leased, fetched: store.fetched }) };
  return store;
}

describe('DispatchRoom', () => {
  it('reads the counts once per COUNTS_READ_MS, counting its own claims since as leases', async () => {
    const store = countsStore(10);
    const room = new DispatchRoom(store, { maxInFlight: 100, maxPages: 0 }, new DispatchSignal());
    expect(await room.room(1000)).toBe(90);
    room.claimed(30);
    expect(await room.room(1100)).toBe(60);
    expect(store.reads).toBe(1);
    store.leased = 25; // some completed, some claimed elsewhere
    expect(await room.room(1000 + COUNTS_READ_MS)).toBe(75);
    expect(store.reads).toBe(2);
  });

  it('keeps FRONTIER_MAX_PAGES between reads: pages fetched and leased, own claims counted', async () => {
    const store = countsStore(5, 90);
    const room = new DispatchRoom(store, { maxInFlight: 1000, maxPages: 100 }, new DispatchSignal());
    expect(await room.room(0)).toBe(5);
    room.claimed(5);
    expect(await room.room(1)).toBe(0);
    store.fetched = 100;
    store.leased = 0;
    expect(await room.room(COUNTS_READ_MS)).toBe('budget-spent');
  });

  it('with no room left, not even by its own lease ends, reads again after COUNTS_REREAD_MS, not before', async () => {
    const store = countsStore(0);
    const room = new DispatchRoom(store, { maxInFlight: 10, maxPages: 0 }, new DispatchSignal());
    expect(await room.room(0)).toBe(10);
    room.claimed(10);
    store.leased = 4; // six completed by another replica
    expect(await room.room(COUNTS_REREAD_MS - 1)).toBe(0);
    expect(store.reads).toBe(1);
    expect(await room.room(COUNTS_REREAD_MS)).toBe(6);
    expect(store.reads).toBe(2);
  });

  it('reads again when the clock goes back', async () => {
    const store = countsStore(0);
    const room = new DispatchRoom(store, { maxInFlight: 10, maxPages: 0 }, new DispatchSignal());
    await room.room(5000);
    await room.room(4000);
    expect(store.reads).toBe(2);
  });

  it("counts this process's lease ends since the read as room, without reading again", async () => {
    const store = countsStore(0, 0);
    const signal = new DispatchSignal();
    const room = new DispatchRoom(store, { maxInFlight: 10, maxPages: 12 }, signal);
    expect(await room.room(0)).toBe(10);
    room.claimed(10);
    const ends = [signal.endingLease(), signal.endingLease(), signal.endingLease()];
    signal.leaseEnded(ends[0], true);
    signal.leaseEnded(ends[1], false);
    expect(await room.room(1)).toBe(2); // 8 leased of 10 in flight; 1 fetched + 8 leased of 12 pages
    signal.leaseEnded(ends[2], true);
    expect(await room.room(2)).toBe(3);
    expect(store.reads).toBe(1);
  });

  it('leaves out the ends sent before the read answered (the read may hold them) and says when the budget is spent', async () => {
    const store = countsStore(2, 0);
    const signal = new DispatchSignal();
    const room = new DispatchRoom(store, { maxInFlight: 10, maxPages: 2 }, signal);
    const early = signal.endingLease();
    expect(await room.room(0)).toBe(0);
    signal.leaseEnded(early, true);
    expect(await room.room(1)).toBe(0);
    const late = signal.endingLease();
    signal.leaseEnded(late, true);
    expect(await room.room(2)).toBe(0);
    const last = signal.endingLease();
    signal.leaseEnded(last, true);
    expect(await room.room(3)).toBe('budget-spent');
    expect(store.reads).toBe(1);
  });
});
