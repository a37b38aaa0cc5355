/**
 * Every queue of the pipeline. BullMQ queue names may not contain ':'.
 *
 *   seeds ─► url-filter ─► url-seen ─► frontier ─► dns-resolver ─► downloader.<id> ─► content-parser
 *                ▲                        ▲                          │  (redirects)     │
 *                │                        └──── frontier-done ◄──────┘                  ▼
 *                └──────── url-extractor ◄────────────────────────────────────── content-seen
 */
export enum QueueName {
  /** URLs admitted by URL-seen (or resubmitted) enter the frontier's per-host queues. */
  FrontierAdd = 'frontier-add',
  /** A fetch finished (or failed): releases the host and sets its next fetch time. */
  FrontierDone = 'frontier-done',
  /** A URL leaving the frontier, to be resolved and vetted. */
  DnsResolve = 'dns-resolve',
  /** A URL with the address the resolver vetted, to be downloaded. */
  Fetch = 'fetch',
  /** A downloaded HTML body (by reference) to decode and parse. */
  Parse = 'parse',
  /** A parsed page to check for duplicates and store. */
  ContentSeen = 'content-seen',
  /** The raw links of a new page, to resolve into absolute URLs. */
  ExtractLinks = 'extract-links',
  /** Absolute URLs (seeds, links, redirect targets) to canonicalise and scope. */
  FilterUrls = 'filter-urls',
  /** Canonical, in-scope URLs to test against URL-seen. */
  SeenUrls = 'seen-urls',
  /** Messages that failed validation, with the reason. */
  DeadLetter = 'dead-letter',
}

/**
 * The fetch queue of one downloader: each downloader consumes its own shard of `fetch`, and the frontier
 * routes a host to the downloader that owns it on the hash ring.
 */
export function fetchQueue(shard: string): QueueName.Fetch {
  return `${QueueName.Fetch}.${shard}` as QueueName.Fetch;
}

/** The queue a (possibly sharded) queue name belongs to, for its payload schema. */
export function baseQueue<Q extends QueueName>(name: Q): Q {
  const dot = name.indexOf('.');
  return (dot < 0 ? name : name.slice(0, dot)) as Q;
}

/** The queues that carry crawl work: when all are empty and idle, the crawl is complete. */
export const PIPELINE_QUEUES: readonly QueueName[] = Object.values(QueueName).filter(
  (q) => q !== QueueName.DeadLetter,
);
