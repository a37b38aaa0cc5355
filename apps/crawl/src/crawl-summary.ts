import type { FailedUrl, HostSetAside, UnreachedHosts } from '@crawler/crawl-state';

/**
 * Why the crawl stopped: `finished` (nothing more would happen by itself), `budget` (--max-pages spent with
 * URLs left), `byte-budget` (--max-bytes spent with URLs left), `time-limit` (--max-time reached) or
 * `interrupted` (SIGINT, SIGTERM).
 */
export type StopReason = 'finished' | 'budget' | 'byte-budget' | 'time-limit' | 'interrupted';

/** One reason pages were not fetched: how many hosts or URLs it cost, and in words what happened and what to do. */
export interface NotFetched {
  reason:
    | 'budget'
    | 'byte-budget'
    | 'time-limit'
    | 'interrupted'
    | 'address-refused'
    | 'dns-failed'
    | 'robots-unreachable'
    | 'crawl-delay'
    | 'timeouts'
    | 'retries-exhausted';
  hosts?: number;
  urls?: number;
  /** A sentence for the terminal: what happened, to which hosts (the first few), and the setting that changes it. */
  detail: string;
}

/** What the run learnt of the hosts it could not fetch, read from the crawl's shared registries at its end. */
export interface NotFetchedInputs {
  refused: UnreachedHosts;
  dnsFailed: UnreachedHosts;
  setAside: HostSetAside[];
  /** The newest URLs given up on (the record of GET /failed-urls). */
  failedUrls?: FailedUrl[];
  /** Why the crawl stopped, and the URLs it left in the frontier (`held`: of those, waiting for a retry or a recrawl). */
  stopped?: { reason: StopReason; left: number; held: number; maxPages: number; maxBytes?: number; maxTimeMs: number };
}

export interface CrawlSummary {
  /** Why the crawl stopped. */
  stopped: StopReason;
  /**
   * Finished with nothing left: no URL left in the frontier (a host backed off for timeouts keeps its URLs
   * there), no failed work, and some page answered. What the crawl decided to drop leaves it complete, named
   * in `notFetched`: URLs given up after their retries (`failedUrls`), hosts set aside for good (an
   * unreachable robots.txt, too long a Crawl-delay), refused addresses, names that did not resolve.
   */
  complete: boolean;
  /** URLs still in the frontier, not fetched: queued, or held for a retry or a recrawl (a backed-off host's included). */
  left: number;
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
  /** Hosts whose URLs were not fetched: robots.txt given up, a Crawl-delay above FRONTIER_MAX_CRAWL_DELAY_MS, or backed off for timeouts. */
  hostsSetAside?: HostSetAside[];
  /** How full URL-seen is, e.g. "bloom: ≈ 1,234 URLs, 0.01 % of … bits set …, false-positive rate now 1.0e-30". */
  urlSeen?: string;
  /** The URLs given up on, newest first (at most FRONTIER_FAILED_URLS_KEPT; `totals['failed-urls']` counts them all). */
  failedUrls?: FailedUrl[];
  /** Why pages were not fetched, reason by reason; empty when nothing was left behind. */
  notFetched?: NotFetched[];
  /** Work left in the failed set, by queue: the run ended with nothing else to do, but is not complete. */
  failed?: Record<string, number>;
  /** What kept the crawl from being complete, in words (the failed work and how to retry it). */
  waitingOn?: string;
  /** The signal that stopped the run before its end (the summary is of what was done until then). */
  interrupted?: string;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const firstHosts = (hosts: string[], all: number) => `${hosts.join(', ')}${all > hosts.length ? `, … (${all - hosts.length} more)` : ''}`;

/** Every reason pages were not fetched, from the registries and the totals; the most common causes first. */
export function notFetched(inputs: NotFetchedInputs, totals: Record<string, number>): NotFetched[] {
  const out: NotFetched[] = [];
  const { refused, dnsFailed, setAside, stopped } = inputs;
  if (stopped && stopped.reason !== 'finished' && stopped.left > 0) {
    const when = {
      budget: `the page budget was spent (--max-pages ${stopped.maxPages}, FRONTIER_MAX_PAGES): raise it to fetch more`,
      'byte-budget': `the byte budget was spent (--max-bytes ${stopped.maxBytes ?? 0}, FRONTIER_MAX_BYTES): raise it to fetch more`,
      'time-limit': `the time limit was reached (--max-time ${stopped.maxTimeMs / 1000} s, CRAWL_MAX_TIME_MS)`,
      interrupted: 'the crawl was interrupted',
    }[stopped.reason];
    const held = stopped.held > 0 ? ` (${stopped.held} of them held for a retry or a recrawl)` : '';
    out.push({ reason: stopped.reason, urls: stopped.left, detail: `${plural(stopped.left, 'URL')} left in the frontier${held} when ${when}.` });
  }
  if (refused.hosts > 0) {
    out.push({
      reason: 'address-refused',
      hosts: refused.hosts,
      urls: totals['error.address-refused'],
      detail: `${plural(refused.hosts, 'host')} resolved to addresses the crawl may not reach (loopback, private, link-local or cloud metadata): ${firstHosts(
        refused.first.map((f) => f.host),
        refused.hosts,
      )}. To crawl hosts on your own network, pass --allow-private (DNS_ALLOW_PRIVATE=true) or list their networks in DNS_ALLOW_CIDRS. First refusal: ${refused.first[0].error}`,
    });
  }
  if (dnsFailed.hosts > 0) {
    out.push({
      reason: 'dns-failed',
      hosts: dnsFailed.hosts,
      detail: `${plural(dnsFailed.hosts, 'host')} did not resolve: ${dnsFailed.first.map((f) => `${f.host} (${f.error})`).join('; ')}${dnsFailed.hosts > dnsFailed.first.length ? `; … (${dnsFailed.hosts - dnsFailed.first.length} more)` : ''}. Check the names, this machine's DNS (DNS_SERVERS) or give answers with --resolve / --hosts-file.`,
    });
  }
  const whys = {
    'robots-unreachable': 'robots.txt stayed unreachable (DOWNLOADER_ROBOTS_UNREACHABLE_MAX_MS, or CRAWL_ROBOTS_IDLE_WAIT_MS once nothing else was left)',
    'crawl-delay': 'their Crawl-delay is above FRONTIER_MAX_CRAWL_DELAY_MS',
    timeouts:
      'their requests kept timing out (FRONTIER_HOST_TIMEOUT_STRIKES in a row; DOWNLOADER_MIN_BYTES_PER_SECOND and DOWNLOADER_TOTAL_TIMEOUT_MS decide what is too slow), and the crawl did not wait out their back-off',
  } as const;
  for (const reason of ['robots-unreachable', 'crawl-delay', 'timeouts'] as const) {
    const hosts = setAside.filter((h) => h.reason === reason);
    if (hosts.length === 0) continue;
    const why = whys[reason];
    out.push({
      reason,
      hosts: hosts.length,
      urls: hosts.reduce((n, h) => n + h.urls, 0),
      detail: `${plural(hosts.length, 'host')} set aside, ${why}: ${firstHosts(
        // Why robots.txt failed is the part to act on: "answered 500", "connection refused".
        hosts.slice(0, 3).map((h) => (reason === 'robots-unreachable' ? `${h.host} (${h.detail})` : h.host)),
        hosts.length,
      )}.`,
    });
  }
  const failed = totals['failed-urls'] ?? 0;
  if (failed > 0) {
    const reasons = Object.entries(totals)
      .filter(([k]) => k.startsWith('failed-urls.'))
      .sort(([, a], [, b]) => b - a)
      .map(([k, v]) => `${k.slice('failed-urls.'.length)} ${v}`);
    const first = (inputs.failedUrls ?? []).slice(0, 3).map((f) => `${f.url} (${f.reason}, ${plural(f.attempts, 'attempt')})`);
    out.push({
      reason: 'retries-exhausted',
      urls: failed,
      detail: `${plural(failed, 'URL')} failed (${reasons.join(', ')}), after FRONTIER_TRANSIENT_ATTEMPTS tries for a 5xx, timeout or dropped connection, FRONTIER_MAX_RETRIES for a 429/503, one for a failure no retry mends${first.length ? `: ${firstHosts(first, failed)}` : ''}. All of them: summary.json's failedUrls, or GET /failed-urls.`,
    });
  }
  return out;
}

/** Pages that answered with a success, a redirect or "not modified": an HTTP error is no page fetched. */
function pagesAnswered(totals: Record<string, number>): number {
  return (totals['status.2xx'] ?? 0) + (totals['status.3xx'] ?? 0) + (totals['status.304'] ?? 0);
}

/**
 * The run's exit code, as the README's table documents it: 130/143 interrupted by SIGINT/SIGTERM, 4 stopped
 * by the page or byte budget or the time limit with URLs left, 3 finished with nothing fetched, 0 finished with pages
 * (`complete` and `notFetched` say whether anything was left behind).
 */
export function exitCodeOf(summary: Pick<CrawlSummary, 'stopped' | 'interrupted' | 'totals'>): number {
  if (summary.stopped === 'interrupted') return summary.interrupted === 'SIGTERM' ? 143 : 130;
  if (summary.stopped !== 'finished') return 4;
  return pagesAnswered(summary.totals) === 0 ? 3 : 0;
}

/** Why a finished crawl fetched nothing, for stderr: the HTTP errors the pages answered, and `notFetched`. */
export function whyNothingFetched(summary: Pick<CrawlSummary, 'totals' | 'notFetched'>): string {
  const errors = Object.entries(summary.totals).filter(([k]) => k === 'status.4xx' || k === 'status.5xx');
  const answered = errors.length ? `every page answered with an HTTP error (${errors.map(([k, v]) => `${k.slice('status.'.length)} ${v}`).join(', ')}). ` : '';
  if (summary.notFetched?.length) return `${answered}${summary.notFetched.map((n) => n.detail).join(' ')}`;
  return answered || 'no page could be reached from the seeds (see the totals above).';
}

/** Finished with nothing left behind (see CrawlSummary.complete). */
export function isComplete(summary: Pick<CrawlSummary, 'stopped' | 'left' | 'failed' | 'totals'>): boolean {
  return summary.stopped === 'finished' && summary.left === 0 && !Object.keys(summary.failed ?? {}).length && pagesAnswered(summary.totals) > 0;
}

const sum = (totals: Record<string, number>, prefix: string) =>
  Object.entries(totals)
    .filter(([k]) => k.startsWith(prefix))
    .reduce((n, [, v]) => n + v, 0);

/** The totals in words; `complete` and `left` are settled once what was left is known (isComplete). */
export function summarize(totals: Record<string, number>, seconds: number, stopped: StopReason = 'finished'): CrawlSummary {
  const pagesFetched = totals.fetched ?? 0;
  return {
    stopped,
    complete: false,
    left: 0,
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
  const ending = {
    finished: s.complete ? 'Crawl complete' : 'Crawl finished, incomplete',
    budget: 'Crawl stopped: page budget spent',
    'byte-budget': 'Crawl stopped: byte budget spent',
    'time-limit': 'Crawl stopped: time limit reached',
    interrupted: `Crawl interrupted (${s.interrupted})`,
  }[s.stopped];
  return [
    `${ending} in ${s.durationSeconds} s (${s.pagesPerSecond} pages/s)`,
    `  pages fetched      ${s.pagesFetched}`,
    `  pages stored       ${s.pagesStored}`,
    `  duplicates         ${s.duplicates} exact, ${s.nearDuplicates} near`,
    `  sitemaps read      ${s.sitemapsRead}`,
    `  robots.txt fetched ${s.robotsFetched}`,
    `  disallowed         ${s.disallowedByRobots}`,
    `  filtered           ${s.filtered}${byReason.length ? ` (${byReason.join(', ')})` : ''}`,
    `  errors             ${s.errors}`,
    ...(s.left ? [`  left               ${plural(s.left, 'URL')} in the frontier, not fetched`] : []),
    ...(s.urlSeen ? [`  URL-seen           ${s.urlSeen}`] : []),
    ...(s.hostsSetAside?.length
      ? [`  hosts set aside    ${s.hostsSetAside.length}`, ...s.hostsSetAside.map((h) => `    ${h.host}: ${h.reason}, ${h.detail} (${h.urls} URLs not fetched)`)]
      : []),
    ...(s.waitingOn ? [`  not complete: ${s.waitingOn}`] : []),
    ...(s.notFetched?.length ? ['  not fetched, because:', ...s.notFetched.map((n) => `    - ${n.detail}`)] : []),
  ].join('\n');
}
