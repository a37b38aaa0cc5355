import type { INestApplicationContext } from '@nestjs/common';
import { QueueName } from '@crawler/contracts';
import { QUEUE_TRANSPORT, QueueTransport } from '@crawler/queue';
import { PauseSwitch } from '@crawler/crawl-state';
import { FrontierService } from './frontier.service';
import { startFrontierWithOneDownloader } from './testing';

describe('FrontierDispatcher: the pause switch', () => {
  let app: INestApplicationContext;
  let close: () => Promise<void>;
  let queues: QueueTransport;
  let pause: PauseSwitch;

  beforeAll(async () => {
    ({ app, close } = await startFrontierWithOneDownloader());
    queues = app.get(QUEUE_TRANSPORT);
    pause = app.get(PauseSwitch);
  });

  afterAll(() => close());

  const dispatched = async () => (await queues.counts(QueueName.DnsResolve)).waiting;
  const until = async (check: () => Promise<boolean>, ms = 5000) => {
    const deadline = Date.now() + ms;
    while (!(await check()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  };

  it('dispatches nothing while paused, keeps queueing what arrives, and dispatches it all on resume', async () => {
    const frontier = app.get(FrontierService);
    const add = (urls: string[]) => frontier.add(urls.map((url) => ({ url, depth: 0, source: 'seed' as const, hops: 0 })));
    // Running: a URL goes out as soon as the dispatcher sees the downloader on the ring.
    await add(['http://warm.test/']);
    await until(async () => (await dispatched()) === 1);
    expect(await dispatched()).toBe(1);

    await pause.pause('test');
    await new Promise((r) => setTimeout(r, 300)); // any tick already past the check is over
    const hosts = ['a', 'b', 'c', 'd'].map((h) => `http://${h}.test/`);
    await add(hosts);
    await new Promise((r) => setTimeout(r, 600)); // several dispatcher ticks, each woken by the new URLs
    expect(await dispatched()).toBe(1);

    await pause.resume();
    await until(async () => (await dispatched()) === 1 + hosts.length);
    expect(await dispatched()).toBe(1 + hosts.length);
  });
});
