import { once } from 'node:events';
import { Redis } from 'ioredis';
import { createRedis, slotOf, type RedisClient } from './redis-client';
import { RedisReplyLostError, withoutResend } from './reply-loss';
import { ReplyLosingProxy } from './testing';

const NODE_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const CLUSTER_URL = process.env.REDIS_CLUSTER_URL || 'redis+cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002';
const key = (name: string) => `t-reply-loss-${process.pid}-${name}`;
const setNx = (client: RedisClient, k: string) => client.set(k, 'mine', 'PX', 10_000, 'NX');

describe('withoutResend: an answer that may come from a resent copy is refused', () => {
  const clients: RedisClient[] = [];
  afterEach(() => Promise.all(clients.splice(0).map((c) => c.quit().catch(() => c.disconnect()))));

  describe('on one node, the reply lost after Redis applied the command', () => {
    let proxy: ReplyLosingProxy;
    beforeAll(async () => {
      const { hostname, port } = new URL(NODE_URL);
      proxy = await ReplyLosingProxy.start({ host: hostname, port: Number(port || 6379) });
    });
    afterAll(() => proxy.close());

    /** A client through the proxy, and a fresh key whose next SET reply the proxy will lose. */
    async function losingNextSet(name: string) {
      const client = createRedis(proxy.url);
      clients.push(client);
      const k = key(name);
      await client.del(k);
      proxy.loseNextReplyTo('set');
      return { client, k };
    }

    it('ioredis sends it again, and the copy answers as if someone else had set the key', async () => {
      const { client, k } = await losingNextSet('plain');
      expect(await setNx(client, k)).toBeNull(); // the key is ours, yet "already set"
      expect(await client.get(k)).toBe('mine');
    });

    it('withoutResend throws instead, and the error says why', async () => {
      const { client, k } = await losingNextSet('guarded');
      await expect(withoutResend(client, 'SET NX', () => setNx(client, k))).rejects.toThrow(RedisReplyLostError);
      expect(await client.get(k)).toBe('mine');
      // The connection is back: the next command is answered.
      await expect(withoutResend(client, 'SET NX', () => setNx(client, key('next')))).resolves.toBe('OK');
      await client.del(key('next'));
    });

    it('answers a command that waited through a reconnection but was sent once', async () => {
      const client = createRedis(proxy.url);
      clients.push(client);
      await client.ping();
      const closed = once(client, 'close');
      client.disconnect(true);
      await closed; // reconnecting: the command waits in the offline queue, unsent
      await expect(withoutResend(client, 'SET NX', () => setNx(client, key('queued')))).resolves.toBe('OK');
      await client.del(key('queued'));
    });
  });

  it('on a cluster, a connection lost under a command: the client sends it again, and the answer is refused', async () => {
    const cluster = createRedis(CLUSTER_URL, { connectionName: `reply-loss-${process.pid}` });
    clients.push(cluster);
    const k = key('cluster');
    await cluster.del(k);
    // The master of the key's slot holds writes for a while, and the client's connection to it is cut
    // while the command waits there: the client sends it again once its slot map is read again.
    const ranges = (await cluster.call('cluster', 'slots')) as [number, number, [string, number]][];
    const [, , [host, port]] = ranges.find(([from, to]) => from <= slotOf(k) && slotOf(k) <= to)!;
    const admin = new Redis({ host, port });
    clients.push(admin);
    await admin.call('client', 'pause', '400', 'write');
    const guarded = withoutResend(cluster, 'SET NX', () => setNx(cluster, k));
    await new Promise((r) => setTimeout(r, 100));
    const list = (await admin.call('client', 'list')) as string;
    const ids = list
      .split('\n')
      .filter((line) => line.includes(`name=reply-loss-${process.pid}`) && /cmd=set\b/.test(line))
      .map((line) => /id=(\d+)/.exec(line)![1]);
    expect(ids.length).toBeGreaterThan(0);
    for (const id of ids) await admin.call('client', 'kill', 'id', id);
    await expect(guarded).rejects.toThrow(RedisReplyLostError);
    expect(await cluster.get(k)).toBe('mine'); // the copy sent again did set it
    await cluster.del(k);
  });
});
