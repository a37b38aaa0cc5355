import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Cluster } from 'ioredis';
import { JobOf, QueueName } from '@crawler/contracts';
import { createRedis, slotOf } from '@crawler/redis';
import { bullmqKeyPrefix } from './bullmq-keys';
import { BullmqQueueTransport } from './bullmq-queue.driver';
import { infrastructureCause } from './infrastructure-error';

/**
 * A master of a Redis Cluster dies (SIGKILL) under a queue that is being sent to and consumed: its replica is
 * promoted (cluster-node-timeout 2 s) and every message sent before, during and after is handled. The cluster is
 * this test's own (ports 7500-7505), since it kills a node of it.
 */
const FIRST_PORT = 7500;
const DIR = '/tmp/t17q-cluster';
const SCRIPT = join(__dirname, '../../../scripts/redis-cluster.sh');
const queue = QueueName.FrontierAdd;

describe('bullmq on a Redis Cluster whose master fails over', () => {
  const prefix = `t17q-failover-${process.pid}`;
  let url: string;
  let admin: Cluster;
  let transport: BullmqQueueTransport;

  beforeAll(() => {
    url = execFileSync('bash', [SCRIPT, 'start', String(FIRST_PORT), DIR], { encoding: 'utf8', timeout: 60_000 }).trim();
    admin = createRedis(url) as Cluster;
  }, 70_000);

  afterAll(async () => {
    const giveUp = new Promise((resolve) => setTimeout(resolve, 5_000).unref());
    await Promise.race([Promise.all([transport?.close(), admin?.quit()]).catch(() => undefined), giveUp]);
    execFileSync('bash', [SCRIPT, 'stop', String(FIRST_PORT), DIR], { timeout: 30_000 });
  }, 40_000);

  it('loses none of the messages sent before, during and after the failover', async () => {
    // Errors no caller awaits (connections lost to the dead node) are expected here: counted, not printed.
    const connectionErrors: Error[] = [];
    // A job the dead master held active is handed on within the stall check, should its worker lose it.
    transport = new BullmqQueueTransport({ connection: url, prefix, stalledMs: 3_000, backoffMs: 100, onError: (error) => void connectionErrors.push(error) });
    const handled = new Set<string>();
    await transport.consume(
      queue,
      async (payload) => {
        await sleep(5);
        handled.add(new URL(payload.urls[0].url).hostname);
      },
      { concurrency: 4 },
    );

    let refused = 0;
    /** Sends until Redis takes it, as a handler retried through an outage would: a refused send was not sent. */
    async function send(host: string, i: number): Promise<void> {
      for (;;) {
        try {
          // Half travel in envelopes, half as jobs of their own.
          return await transport.add(queue, token(host), i % 2 ? { jobId: host } : undefined);
        } catch (error) {
          if (!infrastructureCause(error)) throw error;
          refused++;
          await sleep(100);
        }
      }
    }

    const sent: string[] = [];
    const before = Array.from({ length: 100 }, (_, i) => `before-${i}.test`);
    await Promise.all(before.map((host, i) => send(host, i)));
    sent.push(...before);

    const slot = slotOf(bullmqKeyPrefix(prefix, queue));
    const master = await masterOf(admin, slot);
    // A write the master acknowledged but had not yet passed to its replica is lost with it (replication is
    // asynchronous): the kill waits until the replica has everything sent so far.
    const replica = await replicaCaughtUp(master.port);
    const killedAt = Date.now();
    process.kill(master.pid, 'SIGKILL');

    // Sent every 50 ms while the slot has no master, until its replica has taken over.
    let promoted = 0;
    let i = 0;
    const during: Promise<void>[] = [];
    const sending = (async () => {
      while (!promoted) {
        const host = `during-${i}.test`;
        during.push(send(host, i++).then(() => void sent.push(host)));
        await sleep(50);
      }
    })();
    await until(() => promotedOk(replica), 20_000);
    promoted = Date.now();
    await sending;
    await Promise.all(during);
    const after = Array.from({ length: 50 }, (_, j) => `after-${j}.test`);
    await Promise.all(after.map((host, j) => send(host, j)));
    sent.push(...after);

    await until(() => sent.every((host) => handled.has(host)), 20_000).catch(() => {
      throw new Error(`not handled: ${sent.filter((host) => !handled.has(host)).join(', ')}`);
    });
    expect(await transport.counts(queue)).toEqual({ waiting: 0, active: 0, delayed: 0, failed: 0 });
    console.log(
      `failover: slot ${slot} moved from :${master.port} in ${promoted - killedAt} ms; ${sent.length} messages (${i} sent during it), ` +
        `all handled ${Date.now() - killedAt} ms after the kill; ${refused} sends refused and sent again, ${connectionErrors.length} connection errors`,
    );
  }, 120_000);
});

/** The port and process id of the master that holds `slot`, as the cluster now says. */
async function masterOf(admin: Cluster, slot: number): Promise<{ port: number; pid: number }> {
  const ranges = await admin.cluster('SLOTS');
  const [, , [host, port]] = ranges.find(([from, to]) => slot >= from && slot <= to)!;
  const node = createRedis(`redis://${host}:${port}`);
  try {
    const pid = Number(/process_id:(\d+)/.exec(await node.info('server'))![1]);
    return { port, pid };
  } finally {
    node.disconnect();
  }
}

/**
 * Waits until the replicas of the master on `port` have acknowledged everything it held when called (they
 * acknowledge once a second); answers one's port.
 */
async function replicaCaughtUp(port: number): Promise<number> {
  const node = createRedis(`redis://127.0.0.1:${port}`);
  const replicas = async () => {
    const info = await node.info('replication');
    const offset = Number(/master_repl_offset:(\d+)/.exec(info)![1]);
    return { offset, replicas: [...info.matchAll(/^slave\d+:.*port=(\d+),.*offset=(\d+)/gm)].map((m) => ({ port: Number(m[1]), offset: Number(m[2]) })) };
  };
  try {
    const { offset } = await replicas();
    let port = 0;
    await until(async () => {
      const now = (await replicas()).replicas;
      port = now[0]?.port ?? 0;
      return now.length > 0 && now.every((r) => r.offset >= offset);
      // A new cluster's replicas may still be on their first full sync, which under load takes seconds.
    }, 30_000);
    return port;
  } finally {
    node.disconnect();
  }
}

/** Whether the node on `port` is a master now, in a cluster that serves every slot again. */
async function promotedOk(port: number): Promise<boolean> {
  const node = createRedis(`redis://127.0.0.1:${port}`, { maxRetriesPerRequest: 1 });
  try {
    const [role] = (await node.role()) as [string];
    return role === 'master' && /cluster_state:ok/.test(String(await node.cluster('INFO')));
  } catch {
    return false;
  } finally {
    node.disconnect();
  }
}

function token(host: string): JobOf<QueueName.FrontierAdd> {
  return { v: 1, urls: [{ url: `http://${host}/`, depth: 0, source: 'seed', hops: 0 }] };
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(20);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
