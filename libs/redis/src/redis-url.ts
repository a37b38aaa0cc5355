/**
 * Where the crawl's Redis is, from one setting (`REDIS_URL`):
 *
 * - `redis://[user:password@]host:port[/db]` (or `rediss://` for TLS): one Redis node;
 * - `redis+cluster://[user:password@]host:port,host:port,...` (or `rediss+cluster://`): a Redis Cluster,
 *   reached through any of the listed seed nodes (one is enough; list a few so a start survives one down).
 *
 * A cluster has no databases, so a cluster URL takes no `/db`.
 */
export interface RedisTarget {
  cluster: boolean;
  /** One node, or the cluster's seed nodes. */
  nodes: { host: string; port: number }[];
  username?: string;
  password?: string;
  tls: boolean;
  /** Database number (single node only). */
  db?: number;
}

/** A REDIS_URL that cannot be used, with what is wrong in words that name the setting. */
export class RedisUrlError extends Error {
  constructor(reason: string) {
    super(`REDIS_URL ${reason}. Use redis://host:6379 for one Redis, or redis+cluster://host1:7000,host2:7001 for a Redis Cluster`);
  }
}

const SCHEME = /^(rediss?)(\+cluster)?:\/\//i;

export function parseRedisUrl(text: string): RedisTarget {
  const scheme = SCHEME.exec(text);
  if (!scheme) throw new RedisUrlError(`must start with redis://, rediss://, redis+cluster:// or rediss+cluster:// (got ${JSON.stringify(redact(text))})`);
  const tls = scheme[1].toLowerCase() === 'rediss';
  const rest = text.slice(scheme[0].length);
  const at = rest.lastIndexOf('@', rest.search(/[/?#]|$/));
  const credentials = at >= 0 ? rest.slice(0, at) : '';
  const afterCredentials = at >= 0 ? rest.slice(at + 1) : rest;
  const pathAt = afterCredentials.search(/[/?#]|$/);
  const hosts = afterCredentials.slice(0, pathAt);
  const path = afterCredentials.slice(pathAt);
  const [user, ...pass] = credentials ? credentials.split(':') : [];
  const username = user ? decodeURIComponent(user) : undefined;
  const password = pass.length ? decodeURIComponent(pass.join(':')) : undefined;
  const nodes = hosts.split(',').map((node) => parseNode(node, scheme[2] ? undefined : 6379));
  if (!scheme[2]) {
    if (nodes.length !== 1) throw new RedisUrlError('names more than one host: a list of nodes is a cluster, written redis+cluster://');
    const db = /^\/(\d*)\/?$/.exec(path.replace(/[?#].*$/, '') || '/');
    if (!db) throw new RedisUrlError(`has a path ${JSON.stringify(path)} that is not a database number`);
    return { cluster: false, nodes, username, password, tls, ...(db[1] ? { db: Number(db[1]) } : {}) };
  }
  if (path && !/^\/?$/.test(path)) throw new RedisUrlError('is a cluster URL with a path or query: a Redis Cluster has no databases, so it takes none');
  return { cluster: true, nodes, username, password, tls };
}

function parseNode(node: string, defaultPort: number | undefined): { host: string; port: number } {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d+))?$/.exec(node);
  if (!match) throw new RedisUrlError(`has a node ${JSON.stringify(node)} that is not host:port`);
  const port = match[2] === undefined ? defaultPort : Number(match[2]);
  if (port === undefined) throw new RedisUrlError(`has a cluster node ${JSON.stringify(node)} without a port`);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new RedisUrlError(`has a node ${JSON.stringify(node)} whose port is not 1-65535`);
  return { host: match[1].replace(/^\[|\]$/g, ''), port };
}

/** Whether REDIS_URL (if set) names a cluster: state then spreads its hot keys over shards. */
export function isClusterUrl(url: string | undefined): boolean {
  return url !== undefined && parseRedisUrl(url).cluster;
}

/** The URL without its password, for messages and logs. */
export function redact(text: string): string {
  return text.replace(/^([a-z+]+:\/\/[^:@/]*:)[^@/]*@/i, '$1***@');
}

/** The target as a URL again (password hidden): what a message names. */
export function describeRedis(target: RedisTarget): string {
  const auth = target.username || target.password ? `${target.username ?? ''}${target.password ? ':***' : ''}@` : '';
  const nodes = target.nodes.map(({ host, port }) => `${host.includes(':') ? `[${host}]` : host}:${port}`).join(',');
  return `${target.tls ? 'rediss' : 'redis'}${target.cluster ? '+cluster' : ''}://${auth}${nodes}${target.db ? `/${target.db}` : ''}`;
}
