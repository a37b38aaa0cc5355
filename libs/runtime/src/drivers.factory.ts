import { join } from 'node:path';
import type { CrawlerConfig } from '@crawler/config';
import {
  BodyStaging,
  BundledBodyStaging,
  ContentStore,
  FsContentStore,
  MemoryBodyStaging,
  MinioContentStore,
  PageStore,
  SegmentedPageStore,
} from '@crawler/content-store';
import { FrontierStore, MemoryFrontierStore, RedisFrontierStore } from '@crawler/frontier-store';
import { BullmqQueueTransport, MemoryQueueTransport, QueueTransport } from '@crawler/queue';
import { MemoryStateStore, RedisStateStore, StateStore } from '@crawler/state';

/** Redis when configured (distributed, durable), otherwise in-process memory (embedded). */
export function createQueueTransport(config: CrawlerConfig): QueueTransport {
  return config.redisUrl
    ? new BullmqQueueTransport({ connection: config.redisUrl, prefix: config.prefix, stalledMs: config.queueStalledMs })
    : new MemoryQueueTransport({ validate: config.queueValidateInProcess, maxWaiting: config.queueMaxWaitingInProcess });
}

export function createStateStore(config: CrawlerConfig, onError?: (error: Error) => void): StateStore {
  return config.redisUrl ? new RedisStateStore({ url: config.redisUrl, prefix: config.prefix, onError }) : new MemoryStateStore();
}

/** The frontier's queues and heap: in Redis (shared, durable) or in memory. */
export function createFrontierStore(config: CrawlerConfig): FrontierStore {
  const f = config.frontier;
  const options = {
    frontQueues: f.frontQueues,
    backQueues: f.backQueues,
    priorityBias: f.priorityBias,
    auditLength: f.auditLength,
    perHostLimit: f.perHostLimit,
    perIpLimit: f.perIpLimit,
    perIpIntervalMs: f.perIpIntervalMs,
  };
  return config.redisUrl
    ? new RedisFrontierStore({ url: config.redisUrl, prefix: `${config.prefix}:frontier` }, options)
    : new MemoryFrontierStore(options);
}

/** S3 when configured, otherwise a directory under the data dir. */
export async function createContentStore(config: CrawlerConfig): Promise<ContentStore> {
  return config.s3Url
    ? MinioContentStore.connect({ url: config.s3Url, bucket: config.s3Bucket })
    : new FsContentStore(join(config.dataDir, 'content'));
}

/**
 * Where fetched bodies wait for the parser and content-seen: bundled in the content store when the crawl is
 * durable (Redis: a message that outlives the process must find its body), in memory otherwise.
 */
export function createBodyStaging(config: CrawlerConfig, content: ContentStore, state: StateStore): BodyStaging {
  const { gzipLevel, gzipThreads, stagingLingerMs, stagingMaxBodies, stagingMaxBytes } = config.storage;
  if (!config.redisUrl) return new MemoryBodyStaging(gzipLevel, gzipThreads);
  return new BundledBodyStaging(content, state.namespace('staging'), { gzipLevel, gzipThreads, lingerMs: stagingLingerMs, maxBodies: stagingMaxBodies, maxBytes: stagingMaxBytes });
}

/** Stored pages, in segments on the content store. */
export function createPageStore(config: CrawlerConfig, content: ContentStore): PageStore {
  const { segmentLingerMs, segmentMaxPages, segmentMaxBytes } = config.storage;
  return new SegmentedPageStore(content, { lingerMs: segmentLingerMs, maxPages: segmentMaxPages, maxBytes: segmentMaxBytes });
}
