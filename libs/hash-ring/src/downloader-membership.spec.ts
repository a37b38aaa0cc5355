import { MemoryStateStore, RedisStateStore, type StateStore } from '@crawler/state';
import { DownloaderMembership, DownloaderMembershipOptions, HeartbeatLoop } from './downloader-membership';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const uniquePrefix = () => `test-ring-${process.pid}-${Math.random().toString(36).slice(2)}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits until `check` holds, up to 5 s: the loop's 10–20 ms timers run far later than set on a loaded
 * machine, so a test waits for the beats it counts instead of sleeping a fixed time.
 */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await check()) && Date.now() < deadline) await sleep(5);
}

/** A membership on the test's clock. */
class ClockedMembership extends DownloaderMembership {
  constructor(
    store: StateStore,
    options: DownloaderMembershipOptions,
    private readonly clock: () => number,
  ) {
    super(store, options);
  }

  protected override now(): number {
    return this.clock();
  }
}

interface Fixture {
  /** The namespace a membership is built over. */
  store: StateStore;
  /** A second connection to the same namespace, as another process would have. */
  other(): StateStore;
  dispose(): Promise<void>;
}

/** The same behaviour on every StateStore driver. */
function membershipContract(driver: string, open: () => Fixture) {
  describe(`DownloaderMembership on ${driver}`, () => {
    let fixture: Fixture;
    let t: number;
    const now = () => t;

    beforeEach(() => {
      fixture = open();
      t = 1_700_000_000_000;
    });
    afterEach(() => fixture.dispose());

    it('counts a member live from its heartbeat until expireAfterMs has passed without one', async () => {
      const membership = new ClockedMembership(fixture.store, { heartbeatMs: 1000 }, now);
      expect(membership.expireAfterMs).toBe(3000);
      expect(await membership.live()).toEqual([]);
      await membership.heartbeat('dl-b');
      await membership.heartbeat('dl-a');
      expect(await membership.live()).toEqual(['dl-a', 'dl-b']);

      t += 2000;
      await membership.heartbeat('dl-a');
      t += 1000; // dl-b's heartbeat is exactly expireAfterMs old: still live
      expect(await membership.live()).toEqual(['dl-a', 'dl-b']);
      t += 1;
      expect(await membership.live()).toEqual(['dl-a']);
      t += 2000;
      expect(await membership.live()).toEqual([]);
      await membership.heartbeat('dl-b'); // a heartbeat after expiry rejoins
      expect(await membership.live()).toEqual(['dl-b']);
    });

    it('drops a member that leaves at once, and takes it back on its next heartbeat', async () => {
      const membership = new ClockedMembership(fixture.store, {}, now);
      await membership.heartbeat('dl-1');
      await membership.heartbeat('dl-2');
      await membership.leave('dl-1');
      expect(await membership.live()).toEqual(['dl-2']);
      expect(await fixture.store.hashGet(DownloaderMembership.MEMBERS_KEY, 'dl-1')).toBe('0');
      await membership.heartbeat('dl-1');
      expect(await membership.live()).toEqual(['dl-1', 'dl-2']);
      await membership.leave('never-joined');
      expect(await membership.live()).toEqual(['dl-1', 'dl-2']);
    });

    it('tells a member that left drained from one that left otherwise or went silent, until it beats again', async () => {
      const membership = new ClockedMembership(fixture.store, { heartbeatMs: 1000 }, now);
      for (const id of ['dl-1', 'dl-2', 'dl-3', 'dl-4']) await membership.heartbeat(id);
      await membership.leave('dl-1', { drained: true });
      await membership.leave('dl-2');
      t += 5000; // dl-3 and dl-4 silent past their expiry; dl-4 beats again
      await membership.heartbeat('dl-4');
      expect(await membership.view()).toEqual({ live: ['dl-4'], drained: ['dl-1'] });
      await membership.heartbeat('dl-1');
      expect(await membership.view()).toEqual({ live: ['dl-1', 'dl-4'], drained: [] });
    });

    it('builds the ring of the live members only', async () => {
      const membership = new ClockedMembership(fixture.store, { heartbeatMs: 1000 }, now);
      expect((await membership.ring()).owner('example.com')).toBeNull();
      for (const id of ['dl-1', 'dl-2', 'dl-3']) await membership.heartbeat(id);
      t += 2500;
      await membership.heartbeat('dl-2');
      await membership.heartbeat('dl-3');
      await membership.leave('dl-3');
      t += 1000; // dl-1 expired, dl-3 left
      const ring = await membership.ring();
      expect(ring.members()).toEqual(['dl-2']);
      expect(ring.owner('example.com')).toBe('dl-2');

      await membership.heartbeat('dl-4');
      const hosts = Array.from({ length: 200 }, (_, i) => `site-${i}.test`);
      const expected = ring.withMember('dl-4');
      const fresh = await membership.ring();
      expect(fresh.members()).toEqual(['dl-2', 'dl-4']);
      expect(new Set(hosts.map((h) => fresh.owner(h)))).toEqual(new Set(['dl-2', 'dl-4']));
      expect(hosts.map((h) => fresh.owner(h))).toEqual(hosts.map((h) => expected.owner(h)));
    });

    it('sees the heartbeats of other processes sharing the namespace', async () => {
      const mine = new ClockedMembership(fixture.store, {}, now);
      const theirs = new ClockedMembership(fixture.other(), {}, now);
      await theirs.heartbeat('dl-remote');
      await mine.heartbeat('dl-local');
      expect(await mine.live()).toEqual(['dl-local', 'dl-remote']);
      expect(await theirs.live()).toEqual(['dl-local', 'dl-remote']);
      await mine.leave('dl-remote');
      expect(await theirs.live()).toEqual(['dl-local']);
    });

    it('treats an unreadable stored value as absent', async () => {
      const membership = new ClockedMembership(fixture.store, {}, now);
      await fixture.store.hashSet(DownloaderMembership.MEMBERS_KEY, 'dl-junk', 'not-a-time');
      await fixture.store.hashSet(DownloaderMembership.MEMBERS_KEY, 'dl-negative', '-5');
      await membership.heartbeat('dl-ok');
      expect(await membership.live()).toEqual(['dl-ok']);
    });

    it('keeps a member live while its HeartbeatLoop runs, and drops it when the loop stops', async () => {
      const membership = new ClockedMembership(fixture.store, { heartbeatMs: 20, expireAfterMs: 60 }, now);
      const loop = new HeartbeatLoop(membership, 'dl-looping');
      expect(loop.intervalMs).toBe(20);
      await loop.start();
      expect(loop.running).toBe(true);
      expect(await membership.live()).toEqual(['dl-looping']);

      // Time moves on, 50 ms a step against a 60 ms expiry: from the second step on, only a beat of the loop
      // after the step brings the member back within 60 ms of "now".
      for (let i = 0; i < 3; i++) {
        t += 50;
        await until(async () => (await membership.live()).length === 1);
        expect(await membership.live()).toEqual(['dl-looping']);
      }

      await loop.stop();
      expect(loop.running).toBe(false);
      expect(await membership.live()).toEqual([]);
      await sleep(60); // no beat after stop() brings it back
      expect(await membership.live()).toEqual([]);
    });
  });
}

membershipContract('MemoryStateStore', () => {
  const root = new MemoryStateStore();
  return { store: root.namespace('downloaders'), other: () => root.namespace('downloaders'), dispose: () => root.clear() };
});

membershipContract('RedisStateStore', () => {
  const prefix = uniquePrefix();
  const root = new RedisStateStore({ url: REDIS_URL, prefix });
  const others: RedisStateStore[] = [];
  return {
    store: root.namespace('downloaders'),
    other: () => {
      const other = new RedisStateStore({ url: REDIS_URL, prefix });
      others.push(other);
      return other.namespace('downloaders');
    },
    dispose: async () => {
      await root.clear();
      await Promise.all([root, ...others].map((s) => s.close()));
    },
  };
});

describe('DownloaderMembership options', () => {
  it('rejects settings under which members would flap or never expire', () => {
    const store = new MemoryStateStore();
    expect(() => new DownloaderMembership(store, { heartbeatMs: 0 })).toThrow(/heartbeatMs/);
    expect(() => new DownloaderMembership(store, { heartbeatMs: 1000, expireAfterMs: 1000 })).toThrow(/expireAfterMs/);
    expect(() => new DownloaderMembership(store, { expireAfterMs: Infinity })).toThrow(/expireAfterMs/);
    expect(() => new DownloaderMembership(store, { virtualNodes: 0 })).toThrow(/virtualNodes/);
    const membership = new DownloaderMembership(store);
    expect([membership.heartbeatMs, membership.expireAfterMs]).toEqual([2000, 6000]);
    expect(() => new HeartbeatLoop(membership, 'dl', 6000)).toThrow(/intervalMs/);
    expect(() => new HeartbeatLoop(membership, '')).toThrow(/non-empty/);
  });

  it('refuses ids it could not store and clock readings that would read as "left"', async () => {
    const membership = new ClockedMembership(new MemoryStateStore(), {}, () => 0);
    await expect(membership.heartbeat('dl')).rejects.toThrow(/positive millisecond timestamp/);
    await expect(membership.heartbeat('')).rejects.toThrow(/non-empty/);
    await expect(membership.leave('')).rejects.toThrow(/non-empty/);
  });

  it('builds rings with the configured number of virtual nodes', async () => {
    const membership = new DownloaderMembership(new MemoryStateStore(), { virtualNodes: 40 });
    await membership.heartbeat('dl');
    expect((await membership.ring()).virtualNodes).toBe(40);
  });
});

/** A store whose hashSet can be made to hang or fail, to watch the loop under a slow or broken Redis. */
class FlakyStore extends MemoryStateStore {
  calls: string[] = [];
  failWith: Error | undefined;
  gate: Promise<void> | undefined;

  override async hashSet(key: string, field: string, value: string): Promise<void> {
    this.calls.push(value === '0' ? 'leave' : 'beat');
    await this.gate;
    if (this.failWith) throw this.failWith;
    await super.hashSet(key, field, value);
  }
}

describe('HeartbeatLoop', () => {
  it('runs on an unref’d timer and is idempotent to start', async () => {
    const loop = new HeartbeatLoop(new DownloaderMembership(new MemoryStateStore(), { heartbeatMs: 1000 }), 'dl');
    await loop.start();
    await loop.start();
    // biome-ignore lint/complexity/useLiteralKeys: bracket access is how a test reads a private field
    const timer = loop['timer'];
    expect(timer?.hasRef()).toBe(false);
    await loop.stop();
  });

  it('never stacks beats behind a slow store, and leaves only after the beat in flight', async () => {
    const store = new FlakyStore();
    const loop = new HeartbeatLoop(new DownloaderMembership(store, { heartbeatMs: 10 }), 'dl');
    await loop.start();
    let open!: () => void;
    store.gate = new Promise<void>((resolve) => (open = resolve));
    await until(() => store.calls.length >= 2);
    await sleep(80); // ~8 more intervals while the store hangs: none may start a beat
    expect(store.calls).toEqual(['beat', 'beat']);
    const stopped = loop.stop();
    await sleep(20);
    expect(store.calls).toEqual(['beat', 'beat']);
    open();
    await stopped;
    expect(store.calls).toEqual(['beat', 'beat', 'leave']);
  });

  it('fails start() with the first heartbeat’s error, reports later ones, and recovers', async () => {
    const store = new FlakyStore();
    store.failWith = new Error('redis down');
    const errors: unknown[] = [];
    const membership = new DownloaderMembership(store, { heartbeatMs: 10 });
    const loop = new HeartbeatLoop(membership, 'dl', 10, { onError: (e) => errors.push(e) });
    await expect(loop.start()).rejects.toThrow('redis down');
    await until(() => errors.length >= 2);
    expect(loop.running).toBe(true);
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(loop.consecutiveFailures).toBe(errors.length + 1);
    expect(loop.lastError).toBe(store.failWith);

    store.failWith = undefined;
    await until(() => loop.consecutiveFailures === 0);
    expect(loop.consecutiveFailures).toBe(0);
    expect(loop.lastError).toBeUndefined();
    expect(await membership.live()).toEqual(['dl']);
    await loop.stop();
    expect(await membership.live()).toEqual([]);
  });
});
