import { INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadConfig } from '@crawler/config';
import { QueueName } from '@crawler/contracts';
import { DownloaderMembership } from '@crawler/hash-ring';
import { QUEUE_TRANSPORT, QueueTransport } from '@crawler/queue';
import { PauseSwitch } from '@crawler/crawl-state';
import { RuntimeModule } from '@crawler/runtime';
import { STATE_STORE, StateStore } from '@crawler/state';
import { createLogger } from '@crawler/logging';
import { FrontierModule } from './frontier.module';
import { FrontierService } from './frontier.service';

describe('FrontierDispatcher: the pause switch', () => {
  let app: INestApplicationContext;
  let queues: QueueTransport;
  let pause: PauseSwitch;
  let heartbeat: NodeJS.Timeout;

  beforeAll(async () => {
    const config = loadConfig({}, { logLevel: 'silent', 'frontier.minDelayMs': 0 });
    const logger = createLogger({ level: config.logLevel, service: 'frontier' });
    @Module({ imports: [RuntimeModule.forRoot({ service: 'frontier', config, logger }), FrontierModule] })
    class TestModule {}
    app = await NestFactory.createApplicationContext(TestModule, { logger: false });
    queues = app.get(QUEUE_TRANSPORT);
    pause = app.get(PauseSwitch);
    // A downloader on the ring, so the dispatcher has somewhere to send URLs (nothing consumes them here).
    const membership = new DownloaderMembership(app.get<StateStore>(STATE_STORE).namespace('downloaders'));
    await membership.heartbeat('dl-1');
    heartbeat = setInterval(() => void membership.heartbeat('dl-1'), 500);
  });

  afterAll(async () => {
    clearInterval(heartbeat);
    await app.close();
  });

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
