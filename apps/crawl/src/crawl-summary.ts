export interface CrawlSummary {
  complete: boolean;
  pagesFetched: number;
  pagesStored: number;
  duplicates: number;
  nearDuplicates: number;
  sitemapsRead: number;
  disallowedByRobots: number;
  filtered: number;
  errors: number;
  robotsFetched: number;
  durationSeconds: number;
  pagesPerSecond: number;
  totals: Record<string, number>;
  /** How full URL-seen is, e.g. "bloom: ≈ 1,234 URLs, 0.01 % of … bits set …, false-positive rate now 1.0e-30". */
  urlSeen?: string;
}

const sum = (totals: Record<string, number>, prefix: string) =>
  Object.entries(totals)
    .filter(([k]) => k.startsWith(prefix))
    .reduce((n, [, v]) => n + v, 0);

export function summarize(totals: Record<string, number>, seconds: number, complete: boolean): CrawlSummary {
  const pagesFetched = totals.fetched ?? 0;
  return {
    complete,
    pagesFetched,
    pagesStored: totals.stored ?? 0,
    duplicates: totals.duplicate ?? 0,
    nearDuplicates: totals['duplicate.near'] ?? 0,
    sitemapsRead: totals['sitemap.parsed'] ?? 0,
    disallowedByRobots: totals.disallowed ?? 0,
    filtered: sum(totals, 'filtered.'),
    errors: sum(totals, 'error.'),
    robotsFetched: totals['robots.fetched'] ?? 0,
    durationSeconds: Math.round(seconds * 100) / 100,
    pagesPerSecond: seconds > 0 ? Math.round((pagesFetched / seconds) * 10) / 10 : 0,
    totals,
  };
}

export function formatSummary(s: CrawlSummary): string {
  const byReason = Object.entries(s.totals)
    .filter(([k]) => k.startsWith('filtered.'))
    .sort(([, a], [, b]) => b - a)
    .map(([k, v]) => `${k.slice('filtered.'.length)} ${v}`);
  return [
    `${s.complete ? 'Crawl complete' : 'Crawl stopped'} in ${s.durationSeconds} s (${s.pagesPerSecond} pages/s)`,
    `  pages fetched      ${s.pagesFetched}`,
    `  pages stored       ${s.pagesStored}`,
    `  duplicates         ${s.duplicates} exact, ${s.nearDuplicates} near`,
    `  sitemaps read      ${s.sitemapsRead}`,
    `  robots.txt fetched ${s.robotsFetched}`,
    `  disallowed         ${s.disallowedByRobots}`,
    `  filtered           ${s.filtered}${byReason.length ? ` (${byReason.join(', ')})` : ''}`,
    `  errors             ${s.errors}`,
    ...(s.urlSeen ? [`  URL-seen           ${s.urlSeen}`] : []),
  ].join('\n');
}
