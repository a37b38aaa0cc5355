import { addressOf, createRedis, mastersOf } from '@crawler/redis';
import type { CrawlerConfig } from '@crawler/config';
import type { Logger } from '@crawler/logging';
import { describeRedisMemory, RedisMemoryGauge } from '@crawler/runtime';
import { assertNoEviction, EvictionPolicyError } from '@crawler/state';
import type { Redis } from 'ioredis';
import { PrivateRedisCluster } from '../support/redis-cluster';
import { removeTempDirs } from '../support/temp-dirs';

/**
 * A Redis Cluster's masters each hold their own slots' keys: one master that evicts loses its keys, one
 * that is full refuses writes to its slots. The startup check and the memory gauge read every master, on a
 * cluster of the test's own (its nodes are reconfigured).
 */

const cluster = new PrivateRedisCluster(1);
let masters: Redis[];
let admin: ReturnType<typeof createRedis>;

beforeAll(async () => {
  await cluster.start();
  admin = createRedis(cluster.url);
  await admin.ping();
  masters = mastersOf(admin);
  expect(masters).toHaveLength(3);
}, 90_000);

afterAll(async () => {
  await admin?.quit();
  await cluster.stop();
  removeTempDirs();
}, 60_000);

describe('the eviction-policy check on a cluster', () => {
  afterEach(() => Promise.all(masters.map((m) => m.config('SET', 'maxmemory-policy', 'noeviction'))));

  it('passes when every master is noeviction', async () => {
    await expect(assertNoEviction(cluster.url)).resolves.toBeUndefined();
  });

  it('refuses a cluster with one evicting master, naming that master', async () => {
    const evicting = masters[2];
    await evicting.config('SET', 'maxmemory-policy', 'allkeys-lru');
    const error = await assertNoEviction(cluster.url).then(
      () => undefined,
      (e: EvictionPolicyError) => e,
    );
    expect(error).toBeInstanceOf(EvictionPolicyError);
    expect(error!.master).toBe(addressOf(evicting));
    expect(error!.message).toMatch(
      new RegExp(`^the Redis Cluster master ${addressOf(evicting)} \\(of redis\\+cluster://.*\\) has maxmemory-policy allkeys-lru: .*noeviction on every master`),
    );
  });
});

describe('the memory gauge on a cluster', () => {
  const warnings: string[] = [];
  const logger = { warn: (_: unknown, message: string) => warnings.push(message), info: () => undefined } as unknown as Logger;
  const config = { redisUrl: '', redisMemoryHighWater: 0.9, redisMemoryCheckMs: 0 } as CrawlerConfig;

  afterEach(() => Promise.all(masters.map((m) => m.config('SET', 'maxmemory', '0'))));

  it('reads the fullest master: one full master pauses intake, and is named', async () => {
    await Promise.all(masters.map((m) => m.config('SET', 'maxmemory', String(512 * 1024 * 1024))));
    const full = masters[1];
    // Below what an empty node already uses: writes to its slots are refused (noeviction), reads still answer.
    await full.config('SET', 'maxmemory', String(1024 * 1024));
    const gauge = new RedisMemoryGauge({ ...config, redisUrl: cluster.url }, logger);
    try {
      let reading = await gauge.read();
      for (let i = 0; !reading && i < 50; i++) reading = await new Promise((r) => setTimeout(r, 100)).then(() => gauge.read());
      expect(reading).toMatchObject({ full: true, maxBytes: 1024 * 1024, master: addressOf(full) });
      expect(describeRedisMemory(reading!)).toMatch(new RegExp(`^Redis memory full on master ${addressOf(full)}: used`));
      expect(warnings.join('\n')).toMatch(new RegExp(`Redis memory on master ${addressOf(full)} at .* intake paused`));
    } finally {
      gauge.onApplicationShutdown();
    }
  });

  it('is not full while every master has room', async () => {
    await Promise.all(masters.map((m) => m.config('SET', 'maxmemory', String(512 * 1024 * 1024))));
    const gauge = new RedisMemoryGauge({ ...config, redisUrl: cluster.url }, logger);
    try {
      let reading = await gauge.read();
      for (let i = 0; !reading && i < 50; i++) reading = await new Promise((r) => setTimeout(r, 100)).then(() => gauge.read());
      expect(reading).toMatchObject({ full: false, maxBytes: 512 * 1024 * 1024 });
      expect(reading!.master).toMatch(/^127\.0\.0\.1:\d+$/);
    } finally {
      gauge.onApplicationShutdown();
    }
  });
});
