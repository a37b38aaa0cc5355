import { Registry } from 'prom-client';
import { loadConfig } from '@crawler/config';
import { createRedis, mastersOf } from '@crawler/redis';
import { RedisStateStore, type StateStore } from '@crawler/state';
import { CLUSTER_STATS_SHARDS, CrawlStats } from './crawl-stats.service';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const REDIS_CLUSTER_URL = process.env.REDIS_CLUSTER_URL || 'redis+cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002';

describe.each([
  ['one Redis', REDIS_URL, 1],
  ['a Redis Cluster', REDIS_CLUSTER_URL, CLUSTER_STATS_SHARDS],
])('CrawlStats on %s', (_, url, shards) => {
  let state: StateStore;
  let prefix: string;
  const config = loadConfig({}, { redisUrl: url });

  beforeEach(() => {
    prefix = `t17s-stats-${process.pid}-${Math.random().toString(36).slice(2)}`;
    state = new RedisStateStore({ url, prefix });
  });

  afterEach(async () => {
    await state.clear();
    await state.close();
  });

  it(`adds every process's counts to ${shards} hash(es), and reads their sum`, async () => {
    const processes = Array.from({ length: 4 }, () => new CrawlStats(state, new Registry(), config));
    for (let flush = 0; flush < 10; flush++) {
      processes.forEach((stats, i) => void stats.count('fetched', i + 1));
      await processes[flush % 4].count('stored');
      await Promise.all(processes.map((stats) => stats.flush()));
    }
    const expected = { fetched: 10 * (1 + 2 + 3 + 4), stored: 10 };
    for (const stats of processes) expect(await stats.totals()).toEqual(expected);
    await Promise.all(processes.map((stats) => stats.close()));

    const admin = createRedis(url);
    try {
      await admin.ping(); // a cluster client knows its masters once connected
      const keys = (await Promise.all(mastersOf(admin).map((node) => node.keys(`${prefix}:stats:*`)))).flat();
      if (shards === 1) expect(keys).toEqual([`${prefix}:stats:totals`]);
      else {
        // 40 flushes round the shards from random starts: most are written, spread over the masters.
        expect(keys.length).toBeGreaterThan(shards / 2);
        expect(keys.every((key) => /:stats:totals(:\d+)?$/.test(key))).toBe(true);
        const perMaster = await Promise.all(mastersOf(admin).map(async (node) => (await node.keys(`${prefix}:stats:*`)).length));
        expect(perMaster.filter((n) => n > 0).length).toBeGreaterThan(1);
      }
    } finally {
      await admin.quit();
    }
  });
});
