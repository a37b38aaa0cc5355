import { Changefreq, CrawlUrl, UrlSource } from '@crawler/contracts';

const SOURCES = UrlSource.options;
const CHANGEFREQS = Changefreq.options;

/**
 * A queued URL as the frontier store keeps it: a short JSON array, because a frontier holds hundreds of
 * millions of them and every byte counts (url, depth, source, hops, then only if present: attempts,
 * sitemap priority, revisit state of a recrawl, 1 for a sitemap document, the referrer of a URL a plugin
 * claimed, transient failures so far, a sitemap's `<lastmod>` and `<changefreq>` (as its index)).
 */
export function encodeEntry(entry: CrawlUrl): string {
  const row: unknown[] = [entry.url, entry.depth, SOURCES.indexOf(entry.source), entry.hops];
  const tail = [entry.attempts ?? 0, entry.priority ?? null, entry.revisit ?? null, entry.kind === 'sitemap' ? 1 : null, entry.referrer ?? null, entry.failures || null];
  tail.push(entry.lastmod ?? null, entry.changefreq ? CHANGEFREQS.indexOf(entry.changefreq) : null);
  while (tail.length && (tail[tail.length - 1] === null || (tail.length === 1 && tail[0] === 0))) tail.pop();
  return JSON.stringify([...row, ...tail]);
}

export function decodeEntry(item: string): CrawlUrl {
  const [url, depth, source, hops, attempts, priority, revisit, sitemap, referrer, failures, lastmod, changefreq] = JSON.parse(item);
  return CrawlUrl.parse({
    url,
    kind: sitemap === 1 ? 'sitemap' : undefined,
    depth,
    source: SOURCES[source],
    hops,
    attempts: attempts || undefined,
    failures: failures || undefined,
    priority: priority ?? undefined,
    revisit: revisit ?? undefined,
    referrer: referrer ?? undefined,
    lastmod: lastmod ?? undefined,
    changefreq: changefreq == null ? undefined : CHANGEFREQS[changefreq],
  });
}
