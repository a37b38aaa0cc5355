import { QueueName, serviceNamed, ServiceName } from '@crawler/contracts';

/**
 * The boxes of the classic diagram, in pipeline order, each with the queue it consumes (the arrow leading
 * into it) and the crawl counter that best says what it produces. The dashboard draws them; the status
 * reports a depth and a rate for each.
 */
export interface StageDefinition {
  id: ServiceName;
  label: string;
  /** The queue the stage consumes (the first its service consumes, in the service map); `fetch` sums every downloader's shard. */
  queue: QueueName;
  /** Crawl total counting what the stage turns out, and what to call one of it. */
  counter: string;
  unit: string;
}

/** How each stage is shown; its service and queue come from the service map. */
const STAGE_VIEWS: Omit<StageDefinition, 'queue'>[] = [
  { id: 'url-filter', label: 'URL Filter', counter: 'processed.filter-urls', unit: 'batches' },
  { id: 'url-seen', label: 'URL Seen?', counter: 'frontier.queued', unit: 'new URLs' },
  { id: 'frontier', label: 'URL Frontier', counter: 'processed.dns-resolve', unit: 'dispatched' },
  { id: 'dns-resolver', label: 'DNS Resolver', counter: 'processed.dns-resolve', unit: 'resolved' },
  { id: 'downloader', label: 'Downloader', counter: 'fetched', unit: 'pages' },
  { id: 'content-parser', label: 'Content Parser', counter: 'processed.parse', unit: 'parsed' },
  { id: 'content-seen', label: 'Content Seen?', counter: 'processed.content-seen', unit: 'checked' },
  { id: 'url-extractor', label: 'URL Extractor', counter: 'links.extracted', unit: 'links' },
];

export const PIPELINE_STAGES: readonly StageDefinition[] = STAGE_VIEWS.map((view) => ({ ...view, queue: serviceNamed(view.id).consumes[0].queue }));

/** Crawl totals the monitor keeps a history of (rates are computed from them). */
export const RATE_COUNTERS = [
  'seeds',
  'fetched',
  'stored',
  'duplicate',
  'duplicate.near',
  'errors',
  'frontier.queued',
  'links.extracted',
  'robots.fetched',
  'processed.filter-urls',
  'processed.seen-urls',
  'processed.frontier-add',
  'processed.frontier-done',
  'processed.dns-resolve',
  'processed.fetch',
  'processed.parse',
  'processed.content-seen',
  'processed.extract-links',
] as const;

/**
 * The totals the dashboard reads, from the raw crawl totals: `processed.fetch.<shard>` summed into
 * `processed.fetch`, and `errors` = every `error.*` plus HTTP 4xx/5xx answers.
 */
export function derivedTotals(totals: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  let errors = (totals['status.4xx'] ?? 0) + (totals['status.5xx'] ?? 0);
  for (const [key, value] of Object.entries(totals)) {
    if (key.startsWith('error.')) errors += value;
    if (key.startsWith('processed.fetch.')) out['processed.fetch'] = (out['processed.fetch'] ?? 0) + value;
  }
  for (const key of RATE_COUNTERS) if (key !== 'errors' && key !== 'processed.fetch') out[key] = totals[key] ?? 0;
  out['processed.fetch'] = (out['processed.fetch'] ?? 0) + (totals['processed.fetch'] ?? 0);
  out.errors = errors;
  return out;
}
