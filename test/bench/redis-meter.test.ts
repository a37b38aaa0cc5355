import { randomBytes } from 'node:crypto';
import { createRedis, hashTag, unlinkKeys, scanKeys, type RedisClient } from '@crawler/redis';
import { keyMemoryPerMaster } from '../../bench/crawl/redis-key-memory';
import { RedisMeter } from '../../bench/crawl/redis-meter';
import { REDIS_CLUSTER_URL } from '../support/redis-cluster';
import { REDIS_URL } from '../support/redis-prefix';

/** Writes 64 hashes of ~8 KB under `prefix`, each its own hash tag, so that they spread over the masters. */
async function write(client: RedisClient, prefix: string): Promise<void> {
  const value = 'x'.repeat(8192);
  await Promise.all(Array.from({ length: 64 }, (_, i) => client.hset(`${hashTag(`${prefix}:${i}`)}:h`, 'v', value)));
}

async function clear(client: RedisClient, prefix: string): Promise<void> {
  for await (const keys of scanKeys(client, `{${prefix}:*`)) await unlinkKeys(client, keys);
}

describe('RedisMeter', () => {
  const prefix = `bench-meter-${randomBytes(4).toString('hex')}`;

  it('on one node: one server, its figures as before, no per-server list', async () => {
    const meter = new RedisMeter(REDIS_URL);
    const client = createRedis(REDIS_URL);
    try {
      const servers = await meter.servers();
      expect(servers).toEqual([expect.objectContaining({ role: 'node', pid: expect.any(Number) })]);
      const aof = ((await client.config('GET', 'appendonly')) as string[])[1] === 'yes';
      expect(await meter.describe()).toBe(`1 node, AOF ${aof ? 'on' : 'off'}`);
      await meter.start();
      await write(client, prefix);
      const figures = await meter.stop();
      expect(figures.commands).toBeGreaterThanOrEqual(64);
      expect(figures.nodes).toBeUndefined();
      expect(figures.replicaCpuMs).toBeUndefined();
    } finally {
      await clear(client, prefix);
      await client.quit();
      await meter.close();
    }
  });

  it('on the cluster: every master and replica, with its process; masters summed, replicas apart', async () => {
    const meter = new RedisMeter(REDIS_CLUSTER_URL);
    const client = createRedis(REDIS_CLUSTER_URL);
    try {
      const servers = await meter.servers();
      expect(servers.filter((s) => s.role === 'master')).toHaveLength(3);
      expect(servers.filter((s) => s.role === 'replica')).toHaveLength(3);
      expect(new Set(servers.map((s) => s.pid)).size).toBe(6);
      // CI's cluster keeps an append-only file on every node (scripts/redis-cluster.sh).
      expect(await meter.describe()).toBe('3 masters + 3 replicas, AOF on');
      await meter.start();
      await write(client, prefix);
      const figures = await meter.stop();
      const masters = figures.nodes!.filter((n) => n.role === 'master');
      expect(masters).toHaveLength(3);
      expect(figures.commands).toBe(masters.reduce((n, m) => n + m.commands, 0));
      expect(figures.commands).toBeGreaterThanOrEqual(64);
      expect(figures.topCommands?.find((c) => c.command === 'hset')?.calls).toBeGreaterThanOrEqual(64);
      expect(figures.replicaCpuMs).toBe(figures.nodes!.filter((n) => n.role === 'replica').reduce((n, r) => n + r.cpuMs, 0));

      const memory = await keyMemoryPerMaster(REDIS_CLUSTER_URL, prefix);
      expect(memory).toHaveLength(3);
      expect(memory.reduce((n, m) => n + m.keys, 0)).toBe(64);
      for (const m of memory) expect(m.bytes).toBeGreaterThan(m.keys * 8192);
    } finally {
      await clear(client, prefix);
      await client.quit();
      await meter.close();
    }
  });
});
