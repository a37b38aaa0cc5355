import { INestApplicationContext } from '@nestjs/common';
import { loadConfig } from '@crawler/config';
import { QueueName } from '@crawler/contracts';
import { FRONTIER_STORE, FrontierStore } from '@crawler/frontier-store';
import { DownloaderMembership } from '@crawler/hash-ring';
import { QUEUE_TRANSPORT, QueueTransport } from '@crawler/queue';
import { MemoryStateStore, STATE_STORE, StateStore } from '@crawler/state';
import { FrontierService } from './frontier.service';
import { startFrontier } from './testing';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('FrontierDispatcher: a store outage is not a departure', () => {
  let app: INestApplicationContext;
  let queues: QueueTransport;
  let store: FrontierStore;
  let heartbeat: NodeJS.Timeout;
  /**
   * While set, reads (the dispatcher's) or writes (the downloader's) of the heartbeats fail, as while their
   * master is failed over; each client finds the new master on its own, so the writes may come back later.
   */
  const down = { hashGetAll: false, hashSet: false };

  beforeAll(async () => {
    for (const method of ['hashGetAll', 'hashSet'] as const) {
      const original = MemoryStateStore.prototype[method] as (...args: unknown[]) => Promise<unknown>;
      jest.spyOn(MemoryStateStore.prototype, method).mockImplementation(function (this: MemoryStateStore, ...args: unknown[]) {
        if (down[method] && args[0] === DownloaderMembership.MEMBERS_KEY) return Promise.reject(new Error('CLUSTERDOWN The cluster is down'));
        return original.apply(this, args);
      } as never);
    }
    // Presumed gone after 3 s without a heartbeat (the downloader here beats every 100 ms).
    app = await startFrontier(loadConfig({}, { logLevel: 'silent', 'frontier.minDelayMs': 0, 'downloader.heartbeatMs': 1000 }));
    queues = app.get(QUEUE_TRANSPORT);
    store = app.get(FRONTIER_STORE);
    const membership = new DownloaderMembership(app.get<StateStore>(STATE_STORE).namespace('downloaders'), { heartbeatMs: 1000 });
    await membership.heartbeat('dl-1');
    heartbeat = setInterval(() => void membership.heartbeat('dl-1').catch(() => undefined), 100);
  });

  afterAll(async () => {
    clearInterval(heartbeat);
    await app.close();
    jest.restoreAllMocks();
  });

  it('keeps the leases of a downloader whose heartbeats the outage stopped, once it beats again', async () => {
    await app.get(FrontierService).add([{ url: 'http://leased.test/', depth: 0, source: 'seed', hops: 0 }]);
    const deadline = Date.now() + 5000;
    while ((await queues.counts(QueueName.DnsResolve)).waiting < 1 && Date.now() < deadline) await sleep(20);
    expect((await store.counts()).leased).toBe(1);

    down.hashGetAll = down.hashSet = true;
    await sleep(4000); // longer than the expiry: every heartbeat is stale when the store answers again
    down.hashGetAll = false;
    // The dispatcher reads the ring again (within a second) while the downloader's beats still fail.
    await sleep(1500);
    down.hashSet = false;
    await sleep(2500);
    expect((await store.counts()).leased).toBe(1);
  }, 20_000);

  it('still hands out the leases of a downloader that stopped beating while the store answered', async () => {
    clearInterval(heartbeat);
    // Presumed gone 3 s after its last beat, the ring read again each second: well within 20 s, even on a
    // machine so loaded (CI runs this beside the deploy test's forty containers) that timers run seconds late.
    const deadline = Date.now() + 20_000;
    while ((await store.counts()).leased > 0 && Date.now() < deadline) await sleep(100);
    expect((await store.counts()).leased).toBe(0);
  }, 30_000);
});
