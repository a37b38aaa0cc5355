import calculateSlot from 'cluster-key-slot';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { refreshOnRedirect } from './redirect-refresh';
import { parseRedisUrl, type RedisTarget } from './redis-url';

/** One Redis node or a Redis Cluster: both answer the same commands (a cluster routes each by its key's slot). */
export type RedisClient = Redis | Cluster;

/** What callers may set on either kind of client; the rest follows from the URL. */
export type RedisClientOptions = Pick<
  RedisOptions,
  | 'maxRetriesPerRequest'
  | 'lazyConnect'
  | 'enableAutoPipelining'
  | 'autoPipeliningIgnoredCommands'
  | 'enableOfflineQueue'
  | 'enableReadyCheck'
  | 'connectionName'
  | 'connectTimeout'
  | 'commandTimeout'
>;

/**
 * How often a cluster client re-reads the slot map unasked. Each read opens a connection and rebuilds the
 * 16,384-slot table (5 ms of CPU): every 10 s, with 3 to 6 clients a process, it cost a crawl 0.3 CPU ms a
 * page. The map is re-read when it proves wrong anyway (a redirect, a lost node, CLUSTERDOWN), so this only
 * catches what nothing sent meanwhile would show: slots moved away from nodes this client does not use.
 */
export const SLOTS_REFRESH_MS = 60_000;

/** Slots of a Redis Cluster: a key's slot is CRC16 of its hash tag (the part in the first `{…}`) or of the whole key. */
export const CLUSTER_SLOTS = 16384;

/**
 * A client for REDIS_URL: `redis://` gives a node, `redis+cluster://` a cluster client that follows MOVED and
 * ASK, waits out a failover (CLUSTERDOWN, TRYAGAIN) and refreshes its slot map, with the same options.
 */
export function createRedis(url: string | RedisTarget, options: RedisClientOptions = {}): RedisClient {
  const target = typeof url === 'string' ? parseRedisUrl(url) : url;
  const common = {
    ...(target.username ? { username: target.username } : {}),
    ...(target.password ? { password: target.password } : {}),
    ...(target.tls ? { tls: {} } : {}),
  };
  if (!target.cluster) {
    const [{ host, port }] = target.nodes;
    return new Redis({ host, port, db: target.db ?? 0, ...common, ...options });
  }
  const { lazyConnect, enableAutoPipelining, autoPipeliningIgnoredCommands, enableOfflineQueue, enableReadyCheck, ...perNode } = options;
  const cluster = new Cluster(target.nodes, {
    redisOptions: { ...common, ...perNode },
    lazyConnect,
    // Auto-pipelining halves a master's CPU per page (one read per batch of commands, not per command). Its
    // one flaw: ioredis follows a MOVED or ASK in a pipeline only when every command of it got the same one,
    // and an automatic pipeline mixes the slots of a node, so after a reshard or failover some of its commands
    // fail with MOVED (callers retry them as an outage). `refreshOnRedirect` re-reads the slot map on those.
    enableAutoPipelining,
    autoPipeliningIgnoredCommands,
    enableOfflineQueue,
    enableReadyCheck,
    // A failover takes the cluster a few seconds (a replica is promoted after cluster-node-timeout): commands
    // sent meanwhile wait and retry instead of failing at once.
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 300,
    retryDelayOnTryAgain: 200,
    maxRedirections: 32,
    slotsRefreshTimeout: 2000,
    slotsRefreshInterval: SLOTS_REFRESH_MS,
    clusterRetryStrategy: (times) => Math.min(100 * times, 2000),
  });
  if (enableAutoPipelining) refreshOnRedirect(cluster);
  return cluster;
}

export function isCluster(client: RedisClient): client is Cluster {
  return client instanceof Cluster;
}

/** The masters: every node of a cluster that holds slots, or the one node. State spread over a cluster is read on each. */
export function mastersOf(client: RedisClient): Redis[] {
  return isCluster(client) ? client.nodes('master') : [client];
}

/** host:port of a node (one node, or a cluster's), as messages name it. */
export function addressOf(node: Redis): string {
  const { host, port } = node.options;
  return `${host?.includes(':') ? `[${host}]` : host}:${port}`;
}

/** The key's cluster slot (0 … 16383). */
export function slotOf(key: string): number {
  return calculateSlot(key);
}

/** More tags than this would leave so few slots between two that finding them gets slow. */
export const MAX_SPACED_TAGS = 256;

/**
 * `count` hash tag texts whose slots are evenly spaced over the 16384: tag i is the first of `<name><i>`,
 * `<name><i>-1`, `<name><i>-2`, … whose slot lies within 1/32 of the spacing of the middle of
 * [i·16384/count, (i+1)·16384/count). A cluster gives each master a contiguous slot range, so keys tagged so
 * spread over M masters count/M each, give or take one, where plain names would land where their hash falls
 * (16 Bloom shards fell 8, 4 and 4 on three masters). Deterministic, so every process finds the same tags.
 */
export function spacedTags(name: string, count: number): string[] {
  if (!Number.isInteger(count) || count < 1 || count > MAX_SPACED_TAGS) throw new RangeError(`spaced tags: 1 … ${MAX_SPACED_TAGS} (got ${count})`);
  const spacing = CLUSTER_SLOTS / count;
  const slack = Math.max(1, Math.floor(spacing / 32));
  return Array.from({ length: count }, (_, i) => {
    const middle = Math.floor((i + 0.5) * spacing);
    for (let attempt = 0; ; attempt++) {
      const tag = attempt === 0 ? `${name}${i}` : `${name}${i}-${attempt}`;
      if (Math.abs(slotOf(hashTag(tag)) - middle) <= slack) return tag;
    }
  });
}

/**
 * `{text}`: a hash tag, so that every key that begins with it lands in one slot (one master), which a
 * multi-key script or transaction needs on a cluster. The text may hold no braces: the tag would end early.
 */
export function hashTag(text: string): string {
  if (/[{}]/.test(text)) throw new Error(`a hash tag cannot hold braces: ${JSON.stringify(text)}`);
  return `{${text}}`;
}

/**
 * The masters, once the client knows them: a cluster client that has sent nothing yet has no slot map, and
 * no masters, until its first command is answered.
 */
export async function connectedMastersOf(client: RedisClient): Promise<Redis[]> {
  if (isCluster(client) && client.nodes('master').length === 0) await client.ping();
  return mastersOf(client);
}

/** Keys matching a SCAN pattern, on every master (a cluster's SCAN covers only the node it is sent to). */
export async function* scanKeys(client: RedisClient, match: string, count = 1000): AsyncGenerator<string[]> {
  for (const node of await connectedMastersOf(client)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', match, 'COUNT', count);
      if (keys.length) yield keys;
      cursor = next;
    } while (cursor !== '0');
  }
}

/**
 * Deletes keys, each slot's in one UNLINK (a cluster refuses a multi-key command across slots; a node takes
 * them at once).
 */
export async function unlinkKeys(client: RedisClient, keys: string[]): Promise<void> {
  if (keys.length === 0) return;
  if (!isCluster(client)) {
    await client.unlink(...keys);
    return;
  }
  await Promise.all([...groupBySlot(keys, (k) => k).values()].map((group) => client.unlink(...group)));
}

/** Items grouped by the slot of their key, in their order within each group. */
export function groupBySlot<T>(items: Iterable<T>, keyOf: (item: T) => string): Map<number, T[]> {
  return groupBy(items, (item) => slotOf(keyOf(item)));
}

/** Items grouped by `groupOf`, in their order within each group: what a step split by slot, shard or bucket sends to each. */
export function groupBy<T, G>(items: Iterable<T>, groupOf: (item: T) => G): Map<G, T[]> {
  const groups = new Map<G, T[]>();
  for (const item of items) {
    const key = groupOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}
