import type { INestApplicationContext } from '@nestjs/common';
import { QueueName } from '@crawler/contracts';
import { FRONTIER_STORE, FrontierStore } from '@crawler/frontier-store';
import { QUEUE_TRANSPORT, QueueTransport } from '@crawler/queue';
import { CrawlStats } from '@crawler/runtime';
import { STATE_STORE, StateStore } from '@crawler/state';
import { FrontierService } from './frontier.service';
import { startFrontierWithOneDownloader } from './testing';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * FRONTIER_MAX_TIME_MS in the distributed shape: the clock is the crawl's (the first dispatch, in Redis), not a
 * process's, so a frontier started after the limit (a replica, or one restarted after a crash) dispatches
 * nothing either; URLs stay queued for a crawl given more time.
 */
describe('FrontierDispatcher: the time limit', () => {
  const prefix = `t-time-limit-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const overrides = { redisUrl: REDIS_URL, prefix, 'frontier.maxTimeMs': 1500 };
  const running: { app: INestApplicationContext; close: () => Promise<void> }[] = [];

  afterAll(async () => {
    const state = running[0]?.app.get<StateStore>(STATE_STORE);
    await state?.clear();
    for (const r of running.reverse()) await r.close();
  });

  const until = async (check: () => Promise<boolean>, ms = 5000) => {
    const deadline = Date.now() + ms;
    while (!(await check()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  };

  it('dispatches until the limit, then nothing, in every replica; what is queued stays', async () => {
    running.push(await startFrontierWithOneDownloader(overrides));
    const { app } = running[0];
    const queues = app.get<QueueTransport>(QUEUE_TRANSPORT);
    const dispatched = async () => (await queues.counts(QueueName.DnsResolve)).waiting;
    const add = (f: FrontierService, hosts: string[]) => f.add(hosts.map((h) => ({ url: `http://${h}.test/`, depth: 0, source: 'seed' as const, hops: 0 })));
    await add(app.get(FrontierService), ['a']);
    await until(async () => (await dispatched()) === 1);
    expect(await dispatched()).toBe(1);

    await new Promise((r) => setTimeout(r, 1700));
    await add(app.get(FrontierService), ['c']);
    // A replica started now shares the crawl's clock: it is past the limit too.
    running.push(await startFrontierWithOneDownloader(overrides));
    await add(running[1].app.get(FrontierService), ['d']);
    await new Promise((r) => setTimeout(r, 600));
    expect(await dispatched()).toBe(1);
    expect(await app.get<StateStore>(STATE_STORE).namespace('control').get('crawl-started-at')).toMatch(/^\d+$/);
    // Nothing lost: the URL out is leased, the two that came late wait in the queues.
    expect(await app.get<FrontierStore>(FRONTIER_STORE).stats()).toMatchObject({ size: 3, leased: 1 });
    expect((await app.get(CrawlStats).totals())['frontier.time-limit']).toBeGreaterThanOrEqual(1);
  });
});
