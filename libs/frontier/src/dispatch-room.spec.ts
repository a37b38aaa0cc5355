import { COUNTS_READ_MS, COUNTS_REREAD_MS, DispatchRoom } from './dispatch-room';

/** A store whose counts the test sets, counting the reads. */
function countsStore(leased = 0, fetched = 0) {
  const store = { leased, fetched, reads: 0, counts: async () => (store.reads++, { leased: store.leased, fetched: store.fetched }) };
  return store;
}

describe('DispatchRoom', () => {
  it('reads the counts once per COUNTS_READ_MS, counting its own claims since as leases', async () => {
    const store = countsStore(10);
    const room = new DispatchRoom(store, { maxInFlight: 100, maxPages: 0 });
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
    const room = new DispatchRoom(store, { maxInFlight: 1000, maxPages: 100 });
    expect(await room.room(0)).toBe(5);
    room.claimed(5);
    expect(await room.room(1)).toBe(0);
    store.fetched = 100;
    store.leased = 0;
    expect(await room.room(COUNTS_READ_MS)).toBe('budget-spent');
  });

  it('with no room left reads again after COUNTS_REREAD_MS, not before', async () => {
    const store = countsStore(0);
    const room = new DispatchRoom(store, { maxInFlight: 10, maxPages: 0 });
    expect(await room.room(0)).toBe(10);
    room.claimed(10);
    store.leased = 4; // six completed
    expect(await room.room(COUNTS_REREAD_MS - 1)).toBe(0);
    expect(store.reads).toBe(1);
    expect(await room.room(COUNTS_REREAD_MS)).toBe(6);
    expect(store.reads).toBe(2);
  });

  it('reads again when the clock goes back', async () => {
    const store = countsStore(0);
    const room = new DispatchRoom(store, { maxInFlight: 10, maxPages: 0 });
    await room.room(5000);
    await room.room(4000);
    expect(store.reads).toBe(2);
  });
});
