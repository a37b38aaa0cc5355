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
  /**
   * Work for one plugin (`plugin.<name>`, see `pluginQueue`): responses of the types it claims, and new
   * parsed pages for the plugins with a page hook.
   */
  Plugin = 'plugin',
  /**
   * What a plugin emits (`plugin-events.<name>`, see `pluginEventsQueue`): alerts, findings… for whoever
   * consumes them. Output, not crawl work: not counted as pending.
   */
  PluginEvents = 'plugin-events',
}

/**
 * The fetch queue of one downloader: each downloader consumes its own shard of `fetch`, and the frontier
 * routes a host to the downloader that owns it on the hash ring.
 */
export function fetchQueue(shard: string): QueueName.Fetch {
  return `${QueueName.Fetch}.${shard}` as QueueName.Fetch;
}

/** A plugin's name: lower-case letters, digits and '-', as in `PLUGINS=png,monitor` and `apps/plugin-<name>`. */
export const PLUGIN_NAME = /^[a-z][a-z0-9-]{0,31}$/;

/** The work queue of one plugin: the downloader and content-seen send it what its manifest claims. */
export function pluginQueue(name: string): QueueName.Plugin {
  if (!PLUGIN_NAME.test(name)) throw new Error(`invalid plugin name ${JSON.stringify(name)}`);
  return `${QueueName.Plugin}.${name}` as QueueName.Plugin;
}

/** The queue a plugin emits its events to. */
export function pluginEventsQueue(name: string): QueueName.PluginEvents {
  if (!PLUGIN_NAME.test(name)) throw new Error(`invalid plugin name ${JSON.stringify(name)}`);
  return `${QueueName.PluginEvents}.${name}` as QueueName.PluginEvents;
}

/** The queue a (possibly sharded) queue name belongs to, for its payload schema. */
export function baseQueue<Q extends QueueName>(name: Q): Q {
  const dot = name.indexOf('.');
  return (dot < 0 ? name : name.slice(0, dot)) as Q;
}

/**
 * The name a queue is counted and labelled under: a downloader's shard `fetch.<id>` as `fetch` (its id changes
 * with every process, and would make a new series each time); every other queue, plugin queues included, as
 * itself.
 */
export function metricQueue(name: QueueName): QueueName {
  return baseQueue(name) === QueueName.Fetch ? QueueName.Fetch : name;
}

/**
 * The hops from a fetched page to its links in the frontier. No host's turn waits on them (a turn waits on
 * dns-resolve, fetch and frontier-done), so their messages can wait longer to travel together: see
 * `QUEUE_DISCOVERY_LINGER_MS`.
 */
export const DISCOVERY_QUEUES: readonly QueueName[] = [
  QueueName.Parse,
  QueueName.ContentSeen,
  QueueName.ExtractLinks,
  QueueName.FilterUrls,
  QueueName.SeenUrls,
  QueueName.FrontierAdd,
];

/** The queues that carry crawl work: when all are empty and idle, the crawl is complete. */
export const PIPELINE_QUEUES: readonly QueueName[] = Object.values(QueueName).filter((q) => q !== QueueName.DeadLetter && q !== QueueName.PluginEvents);
