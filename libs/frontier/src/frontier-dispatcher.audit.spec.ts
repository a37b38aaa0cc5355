import type { INestApplicationContext } from '@nestjs/common';
import { QueueName } from '@crawler/contracts';
import { FRONTIER_STORE, FrontierStore } from '@crawler/frontier-store';
import { Pipeline } from '@crawler/runtime';
import { FrontierService } from './frontier.service';
import { startFrontierWithOneDownloader } from './testing';

describe('FrontierDispatcher: the politeness audit', () => {
  let app: INestApplicationContext;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ app, close } = await startFrontierWithOneDownloader());
  });

  afterAll(() => close());

  // A send that is slow to be acknowledged (a loaded machine) must not date the dispatch late: the fetch it
  // starts can complete meanwhile, and a dispatch dated after its own completion reads as a request made
  // before the host's delay was over.
  it('dates a dispatch when the URL is sent, not when the send is acknowledged', async () => {
    const pipeline = app.get(Pipeline);
    const send = pipeline.send.bind(pipeline);
    let sentAt = 0;
    jest.spyOn(pipeline, 'send').mockImplementation(async (queue, payload, options) => {
      if (queue === QueueName.DnsResolve) {
        sentAt = Date.now();
        await new Promise((r) => setTimeout(r, 300));
      }
      return send(queue, payload, options);
    });
    await app.get(FrontierService).add([{ url: 'http://slow-ack.test/', depth: 0, source: 'seed', hops: 0 }]);
    const store = app.get<FrontierStore>(FRONTIER_STORE);
    const deadline = Date.now() + 5000;
    let log: string[] = [];
    while (log.length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      log = await store.auditLog('slow-ack.test');
    }
    const [dispatch] = log.map((e) => JSON.parse(e)).filter((e) => e.event === 'dispatch');
    expect(dispatch.at).toBeLessThanOrEqual(sentAt);
  });
});
