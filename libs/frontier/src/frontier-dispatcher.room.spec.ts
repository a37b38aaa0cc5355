import type { INestApplicationContext } from '@nestjs/common';
import { QueueName } from '@crawler/contracts';
import { FRONTIER_STORE, FrontierStore } from '@crawler/frontier-store';
import { QUEUE_TRANSPORT, QueueTransport } from '@crawler/queue';
import { DispatchSignal } from './dispatch-signal';
import { FrontierService } from './frontier.service';
import { startFrontierWithOneDownloader } from './testing';

describe('FrontierDispatcher: with no room', () => {
  let app: INestApplicationContext;
  let close: () => Promise<void>;
  let queues: QueueTransport;

  beforeAll(async () => {
    ({ app, close } = await startFrontierWithOneDownloader({ 'frontier.maxInFlight': 2 }));
    queues = app.get(QUEUE_TRANSPORT);
  });

  afterAll(() => close());

  const until = async (check: () => Promise<boolean>, ms = 5000) => {
    const deadline = Date.now() + ms;
    while (!(await check()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  };

  it('asks the store nothing when woken while the leases out fill FRONTIER_MAX_IN_FLIGHT', async () => {
    const frontier = app.get(FrontierService);
    const store = app.get<FrontierStore>(FRONTIER_STORE);
    await frontier.add(['a', 'b', 'c', 'd'].map((h) => ({ url: `http://${h}.test/`, depth: 0, source: 'seed' as const, hops: 0 })));
    await until(async () => (await queues.counts(QueueName.DnsResolve)).waiting === 2);
    const calls = ['promoteDue', 'claim', 'nextDueAt'].map((method) => jest.spyOn(store, method as 'claim'));
    // Woken as every lease that ends in this process wakes it: the two out are still out, so there is no room.
    const signal = app.get(DispatchSignal);
    for (let i = 0; i < 50; i++) {
      signal.wake();
      await new Promise((r) => setTimeout(r, 2));
    }
    expect(calls.map((spy) => spy.mock.calls.length)).toEqual([0, 0, 0]);
    expect((await queues.counts(QueueName.DnsResolve)).waiting).toBe(2);
  });
});
