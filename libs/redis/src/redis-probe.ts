import { Redis } from 'ioredis';
import { describeRedis, parseRedisUrl, type RedisTarget } from './redis-url';

/** REDIS_URL names something the crawl cannot use: the message says what, and how to write it. */
export class RedisSettingError extends Error {
  constructor(message: string) {
    super(`REDIS_URL ${message}`);
  }
}

/**
 * Asks the nodes of REDIS_URL, one after another, whether they run in cluster mode, until one answers, and
 * compares with what the URL says. A node URL pointed at a cluster node would meet MOVED on most keys, and a
 * cluster URL pointed at a plain node would never get a slot map: both are refused here, by name, before
 * anything else runs. Answers nothing when the URL fits; throws RedisSettingError when it does not, or when
 * no node answered within `timeoutMs`.
 */
export async function probeRedis(url: string | RedisTarget, timeoutMs = 5000): Promise<void> {
  const target = typeof url === 'string' ? parseRedisUrl(url) : url;
  const deadline = Date.now() + timeoutMs;
  const failures = new Map<string, string>();
  do {
    for (const { host, port } of target.nodes) {
      const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
      const enabled = await clusterEnabled(target, host, port, Math.max(200, Math.min(2000, deadline - Date.now()))).catch((error: Error) => {
        failures.set(address, error.message);
        return undefined;
      });
      if (enabled === undefined) continue;
      if (enabled && !target.cluster) {
        throw new RedisSettingError(
          `names one Redis node, but ${address} is a node of a Redis Cluster (it would answer MOVED for most keys): write ` +
            `${describeRedis({ ...target, cluster: true, db: undefined })}, listing a few of the cluster's nodes`,
        );
      }
      if (!enabled && target.cluster) {
        throw new RedisSettingError(
          `is a Redis Cluster URL, but ${address} is a single Redis with cluster mode off: write ` +
            `${describeRedis({ ...target, cluster: false, nodes: [{ host, port }] })} (or point it at a cluster's nodes)`,
        );
      }
      return;
    }
    if (Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
  } while (Date.now() < deadline);
  const tried = [...failures].map(([address, reason]) => `${address} (${reason})`).join(', ');
  throw new RedisSettingError(
    `${describeRedis(target)}: no Redis answered within ${timeoutMs} ms: ${tried || 'no node tried'}. Is it running, and is the host and port right?`,
  );
}

/** `cluster_enabled` of one node's INFO; rejects when the node cannot be reached or refuses. */
async function clusterEnabled(target: RedisTarget, host: string, port: number, timeoutMs: number): Promise<boolean> {
  const node = new Redis({
    host,
    port,
    ...(target.username ? { username: target.username } : {}),
    ...(target.password ? { password: target.password } : {}),
    ...(target.tls ? { tls: {} } : {}),
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  // The connection's own error (ECONNREFUSED, ENOTFOUND, WRONGPASS…) says more than "Connection is closed".
  let cause: Error | undefined;
  node.on('error', (error: Error) => (cause ??= error));
  try {
    await node.connect();
    const info = await node.info('cluster');
    return /^cluster_enabled:1/m.test(info);
  } catch (error) {
    throw cause ?? error;
  } finally {
    node.disconnect();
  }
}
