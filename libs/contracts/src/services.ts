import { baseQueue, QueueName } from './queues';

/** A queue a service consumes, and the setting that says how many of its messages one process handles at once. */
export interface ConsumedQueue {
  queue: QueueName;
  /** The environment variable of that concurrency; none when it is fixed. */
  concurrency?: string;
}

/**
 * A pipeline service: the program `npm run start:<name>`, the image's entrypoint, a Compose service and a
 * Kubernetes Deployment each start by this name.
 */
export interface ServiceDefinition {
  name: string;
  /** The app folder whose `src/main.ts` runs it (`dist/<app>/src/main.js` once built); its logic is in `libs/<name>`. */
  app: string;
  consumes: readonly ConsumedQueue[];
  /**
   * The stores besides Redis (which every service uses) it reads or writes: `content`, the content store (S3),
   * and `records`, the per-page records (PostgreSQL with RECORDS_URL). Its readiness depends on those only.
   */
  uses: readonly ServiceStore[];
}

export type ServiceStore = 'content' | 'records';

// `as const`, so that ServiceName is the union of the names the map holds.
const MAP = [
  {
    name: 'frontier',
    app: 'apps/frontier',
    consumes: [
      { queue: QueueName.FrontierAdd, concurrency: 'FRONTIER_ADD_CONCURRENCY' },
      { queue: QueueName.FrontierDone, concurrency: 'FRONTIER_DONE_CONCURRENCY' },
    ],
    uses: [],
  },
  { name: 'dns-resolver', app: 'apps/dns-resolver', consumes: [{ queue: QueueName.DnsResolve, concurrency: 'DNS_CONCURRENCY' }], uses: [] },
  // Each downloader consumes its own shard of `fetch`, `fetch.<id>` (see fetchQueue).
  { name: 'downloader', app: 'apps/downloader', consumes: [{ queue: QueueName.Fetch, concurrency: 'DOWNLOADER_CONCURRENCY' }], uses: ['content'] },
  { name: 'content-parser', app: 'apps/content-parser', consumes: [{ queue: QueueName.Parse, concurrency: 'PARSER_CONCURRENCY' }], uses: ['content'] },
  { name: 'content-seen', app: 'apps/content-seen', consumes: [{ queue: QueueName.ContentSeen, concurrency: 'CONTENT_SEEN_CONCURRENCY' }], uses: ['content', 'records'] },
  { name: 'url-extractor', app: 'apps/url-extractor', consumes: [{ queue: QueueName.ExtractLinks, concurrency: 'URL_EXTRACTOR_CONCURRENCY' }], uses: [] },
  { name: 'url-filter', app: 'apps/url-filter', consumes: [{ queue: QueueName.FilterUrls, concurrency: 'URL_FILTER_CONCURRENCY' }], uses: [] },
  { name: 'url-seen', app: 'apps/url-seen', consumes: [{ queue: QueueName.SeenUrls, concurrency: 'URL_SEEN_CONCURRENCY' }], uses: [] },
  // Keeps what lands in the dead-letter queue for `npm run dead-letters`; seeds come to it over HTTP.
  { name: 'control-plane', app: 'apps/control-plane', consumes: [{ queue: QueueName.DeadLetter }], uses: ['content', 'records'] },
] as const satisfies readonly ServiceDefinition[];

export type ServiceName = (typeof MAP)[number]['name'];

/**
 * The service map: every pipeline service, the one place that lists them. Start scripts, the embedded runner,
 * the control plane's stages and the test support read it; the deployment files are checked against it
 * (test/architecture/service-map.test.ts). Plugins are not listed: each is the service `plugin-<name>` (app
 * `apps/plugin-<name>`) consuming `plugin.<name>`, found by that rule.
 */
export const SERVICES: readonly (ServiceDefinition & { name: ServiceName })[] = MAP;

/** The names of the services, in the order of the map. */
export const SERVICE_NAMES: readonly ServiceName[] = SERVICES.map((s) => s.name);

/** One service of the map by name. */
export function serviceNamed(name: ServiceName): ServiceDefinition {
  return SERVICES.find((s) => s.name === name)!;
}

/** The service that consumes a queue (a downloader's shard `fetch.<id>` belongs to the downloader), if any. */
export function consumerOf(queue: string): ServiceDefinition | undefined {
  const base = baseQueue(queue as QueueName);
  return SERVICES.find((s) => s.consumes.some((c) => c.queue === base));
}

/**
 * The stores besides Redis that a process uses: those of the services it runs (`frontier+url-seen`: several
 * joined by '+'). A process that is not in the map (a plugin, the embedded crawl) may use them all.
 */
export function storesUsedBy(process: string): ReadonlySet<ServiceStore> {
  const used = new Set<ServiceStore>();
  for (const name of process.split('+')) {
    const service = SERVICES.find((s) => s.name === name);
    if (!service) return new Set<ServiceStore>(['content', 'records']);
    for (const store of service.uses) used.add(store);
  }
  return used;
}
