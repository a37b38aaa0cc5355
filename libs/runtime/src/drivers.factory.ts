import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { CrawlerConfig } from '@crawler/config';
import { DISCOVERY_QUEUES } from '@crawler/contracts';
import {
  BodyStaging,
  BundledBodyStaging,
  Compression,
  ContentStore,
  FsContentStore,
  MemoryBodyStaging,
  MinioContentStore,
  PageStore,
  resolveCodec,
  SegmentedPageStore,
} from '@crawler/content-store';
import { createRedisFrontierStore, FrontierSpill, FrontierStore, MemoryFrontierStore } from '@crawler/frontier-store';
import { BullmqQueueTransport, MemoryQueueTransport, QueueTransport } from '@crawler/queue';
import { BatchingRecordsStore, FileRecordsStore, PostgresRecordsStore, RecordsStore, RedisRecordsStore } from '@crawler/records';
import { hashBucketsFor, MemoryStateStore, RedisStateStore, StateStore } from '@crawler/state';

/** Redis when configured (distributed, durable), otherwise in-process memory (embedded). */
export function createQueueTransport(config: CrawlerConfig, onError?: (error: Error) => void): QueueTransport {
  const outage = { outageMaxMs: config.queueInfraOutageMaxMs, outageBackoffMaxMs: config.queueInfraBackoffMaxMs };
  return config.redisUrl
    ? new BullmqQueueTransport({
        connection: config.redisUrl,
        prefix: config.prefix,
        stalledMs: config.queueStalledMs,
        maxStalledCount: config.queueMaxStalled,
        attempts: config.queueAttempts,
        backoffMs: config.queueBackoffMs,
        countMaxJobs: config.queueCountMaxJobs,
        batchLingerMs: config.queueBatchLingerMs,
        batchLingerMsByQueue: Object.fromEntries(DISCOVERY_QUEUES.map((queue) => [queue, config.queueDiscoveryLingerMs])),
        batchMaxMessages: config.queueBatchMaxMessages,
        onError,
        ...outage,
      })
    : new MemoryQueueTransport({ validate: config.queueValidateInProcess, maxWaiting: config.queueMaxWaitingInProcess, ...outage });
}

export function createStateStore(config: CrawlerConfig, onError?: (error: Error) => void): StateStore {
  return config.redisUrl ? new RedisStateStore({ url: config.redisUrl, prefix: config.prefix, onError }) : new MemoryStateStore();
}

/**
 * The per-page records: PostgreSQL when RECORDS_URL is set, in the schema CRAWLER_PREFIX names (connected and
 * migrated here: a database that cannot be reached or migrated rejects with RecordsSettingError), else the state
 * store's Redis hashes when REDIS_URL is, else files under the data dir (the embedded crawl's `--out`: a record a
 * page in memory would grow the process with every page). Only PostgreSQL's calls are batched across jobs
 * (RECORDS_BATCH_LINGER_MS, RECORDS_BATCH_MAX): memory has no round trip to save, and Redis answers a page's few
 * commands in well under a millisecond.
 */
export async function createRecordsStore(config: CrawlerConfig, state: StateStore): Promise<RecordsStore> {
  if (config.recordsUrl) {
    // Each content-seen job records one page: coalesced across jobs, PostgreSQL gets a statement per batch.
    const postgres = await PostgresRecordsStore.open({ url: config.recordsUrl, schema: config.prefix, poolSize: config.recordsPoolSize });
    return new BatchingRecordsStore(postgres, { lingerMs: config.recordsBatchLingerMs, maxItems: config.recordsBatchMax });
  }
  return config.redisUrl ? new RedisRecordsStore({ state, buckets: hashBucketsFor(config.redisUrl) }) : new FileRecordsStore(join(config.dataDir, 'records'));
}

/**
 * The frontier's queues and heap: in Redis (shared, durable; sharded on a cluster) or in memory, the queued URLs
 * beyond FRONTIER_SPILL_CHUNK_ITEMS a queue in a file under the data dir.
 */
export function createFrontierStore(config: CrawlerConfig, onError?: (error: Error) => void): FrontierStore {
  const f = config.frontier;
  const options = {
    frontQueues: f.frontQueues,
    backQueues: f.backQueues,
    priorityBias: f.priorityBias,
    auditLength: f.auditLength,
    batchMemoryMs: f.batchMemoryMs,
    perHostLimit: f.perHostLimit,
    perIpLimit: f.perIpLimit,
    perIpIntervalMs: f.perIpIntervalMs,
    perIpDomainsPerStep: f.perIpDomainsPerStep,
    perIpMaxScale: f.perIpMaxScale,
    perIpCdnCidrs: f.perIpCdnCidrs,
    perIpStrictCidrs: f.perIpStrictCidrs,
  };
  return config.redisUrl
    ? createRedisFrontierStore({ url: config.redisUrl, prefix: `${config.prefix}:frontier`, shards: f.shards, onError }, options)
    : new MemoryFrontierStore(options, f.spillChunkItems > 0 ? spillUnder(config.dataDir, f.spillChunkItems) : undefined);
}

function spillUnder(dataDir: string, chunkItems: number): FrontierSpill {
  mkdirSync(join(dataDir, 'frontier'), { recursive: true });
  return { file: join(dataDir, 'frontier', 'queued.spill'), chunkItems };
}

/** S3 when configured, otherwise a directory under the data dir. */
export async function createContentStore(config: CrawlerConfig): Promise<ContentStore> {
  return config.s3Url ? MinioContentStore.connect({ url: config.s3Url, bucket: config.s3Bucket }) : new FsContentStore(join(config.dataDir, 'content'));
}

/**
 * Where fetched bodies wait for the parser and content-seen: bundled in the content store when the crawl is
 * durable (Redis: a message that outlives the process must find its body), in memory otherwise.
 */
export function createBodyStaging(config: CrawlerConfig, content: ContentStore, state: StateStore): BodyStaging {
  const { gzipThreads: threads, stagingLingerMs, stagingMaxBodies, stagingMaxBytes } = config.storage;
  const compression = compressionOf(config);
  if (!config.redisUrl) return new MemoryBodyStaging(compression, threads);
  return new BundledBodyStaging(content, state.namespace('staging'), {
    compression,
    threads,
    lingerMs: stagingLingerMs,
    maxBodies: stagingMaxBodies,
    maxBytes: stagingMaxBytes,
  });
}

/** `CONTENT_CODEC` on this runtime, with its codec's level. */
function compressionOf(config: CrawlerConfig): Compression {
  const codec = resolveCodec(config.storage.codec);
  return { codec, level: codec === 'zstd' ? config.storage.zstdLevel : config.storage.gzipLevel };
}

/** Stored pages, in segments on the content store. */
export function createPageStore(config: CrawlerConfig, content: ContentStore): PageStore {
  const { segmentLingerMs, segmentMaxPages, segmentMaxBytes } = config.storage;
  return new SegmentedPageStore(content, { lingerMs: segmentLingerMs, maxPages: segmentMaxPages, maxBytes: segmentMaxBytes });
}
