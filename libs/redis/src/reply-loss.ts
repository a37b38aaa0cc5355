import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from './redis-client';

/**
 * A command's reply can be lost with its connection after the command took effect: Redis killed after it
 * wrote the AOF, a master failing over, a network cut. ioredis then sends the command again on the next
 * connection (a cluster client, to the slot's new master), and the caller gets the second copy's answer.
 * For SET, that is harmless. For a command whose answer depends on what was there before (SET NX, SADD,
 * BITFIELD SET: "was it new?") the second copy finds the first copy's write and answers "no": url-seen then
 * took a new URL for one seen before, and the URL was never crawled.
 *
 * So such commands are run by `withoutResend`, which refuses an answer that may come from a resent copy:
 * the caller gets an error (a Redis outage, retried as one) and takes the path it has for an answer it
 * never got.
 */
export class RedisReplyLostError extends Error {
  constructor(what: string) {
    super(`Connection lost before the reply to ${what}: it may have taken effect, so its answer cannot be trusted`);
    this.name = 'RedisReplyLostError';
  }
}

/** Connections of a client lost while commands could be in flight on them, counted since first asked. */
interface LossCount {
  lost: number;
}

const counts = new WeakMap<RedisClient, LossCount>();

/**
 * Counts the closes of a connection that was ready (commands written on it may be unanswered); closes while
 * reconnecting are not counted, as nothing was written on those connections.
 */
function watchNode(node: Redis, count: LossCount): void {
  let live = node.status === 'ready';
  node.on('ready', () => {
    live = true;
  });
  node.on('close', () => {
    if (live) count.lost++;
    live = false;
  });
}

function lossCount(client: RedisClient): LossCount {
  const known = counts.get(client);
  if (known) return known;
  const fresh: LossCount = { lost: 0 };
  if (client instanceof Cluster) {
    for (const node of client.nodes('all')) watchNode(node, fresh);
    client.on('+node', (node: Redis) => watchNode(node, fresh));
  } else {
    watchNode(client, fresh);
  }
  counts.set(client, fresh);
  return fresh;
}

/**
 * Runs `command` and answers its reply, or throws RedisReplyLostError when a connection of the client was
 * lost while it was in flight (on any node: a cluster client may have sent it to another). Conservative: a
 * loss elsewhere during the command also refuses it, which costs one retry, during an outage only.
 */
export async function withoutResend<T>(client: RedisClient, what: string, command: () => Promise<T>): Promise<T> {
  const count = lossCount(client);
  const before = count.lost;
  const reply = await command();
  if (count.lost !== before) throw new RedisReplyLostError(what);
  return reply;
}
