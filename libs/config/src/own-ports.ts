import { parseRedisUrl } from '@crawler/redis';
import type { CrawlerConfig } from './crawler-config';

/** A Redis Cluster node talks to the others on its port + 10000 (the cluster bus). */
const CLUSTER_BUS_OFFSET = 10_000;

/**
 * The ports of the crawler's own infrastructure and services, from its settings: every node of REDIS_URL
 * (and a cluster's bus ports), S3_URL's, RECORDS_URL's and PORT. No request of the crawl may go there,
 * whatever the host: a page that names its own host on the crawler's Redis port reaches that Redis as soon
 * as private addresses are allowed.
 */
export function ownPorts(config: Pick<CrawlerConfig, 'redisUrl' | 's3Url' | 'recordsUrl' | 'port'>): number[] {
  const ports = new Set<number>();
  if (config.redisUrl) {
    const redis = parseRedisUrl(config.redisUrl);
    for (const node of redis.nodes) {
      ports.add(node.port);
      if (redis.cluster && node.port + CLUSTER_BUS_OFFSET <= 65535) ports.add(node.port + CLUSTER_BUS_OFFSET);
    }
  }
  for (const url of [config.s3Url, config.recordsUrl]) {
    if (!url) continue;
    const parsed = new URL(url);
    ports.add(parsed.port ? Number(parsed.port) : url.startsWith('postgres') ? 5432 : parsed.protocol === 'https:' ? 443 : 80);
  }
  if (config.port > 0) ports.add(config.port);
  // 80 and 443 are every website's: S3 behind a plain https endpoint must not close the web.
  ports.delete(80);
  ports.delete(443);
  return [...ports].sort((a, b) => a - b);
}

/** The port rules of a crawl (the URL filter's settings and the crawler's own ports), as `PortPolicy` takes them. */
export function portRules(config: CrawlerConfig): { allowed: readonly string[]; blocked?: readonly string[]; own: readonly number[] } {
  return { allowed: config.filter.allowedPorts, blocked: config.filter.blockedPorts, own: ownPorts(config) };
}
