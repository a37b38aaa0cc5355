import { CrawlUrl, UrlSource } from '@crawler/contracts';

const SOURCES = UrlSource.options;

/**
 * A queued URL as the frontier store keeps it: a short JSON array, because a frontier holds hundreds of
 * millions of them and every byte counts (url, depth, source, hops, attempts, sitemap priority).
 */
export function encodeEntry(entry: CrawlUrl): string {
  const row: (string | number)[] = [entry.url, entry.depth, SOURCES.indexOf(entry.source), entry.hops];
  if (entry.attempts || entry.priority !== undefined) row.push(entry.attempts ?? 0);
  if (entry.priority !== undefined) row.push(entry.priority);
  return JSON.stringify(row);
}

export function decodeEntry(item: string): CrawlUrl {
  const [url, depth, source, hops, attempts, priority] = JSON.parse(item);
  return CrawlUrl.parse({ url, depth, source: SOURCES[source], hops, attempts: attempts || undefined, priority });
}
