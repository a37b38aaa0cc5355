import type { CrawlRun, TargetCheck } from '../report/results';

/** The targets, as ratios of runs measured in the same benchmark. */
export function targetChecks(runs: CrawlRun[], polite: { hosts: number; delayMs: number }): TargetCheck[] {
  const by = (id: string) => runs.find((r) => r.id === id);
  const checks: TargetCheck[] = [];
  const ratio = (label: string, a: number | undefined, b: number | undefined, op: '≥' | '≤', bound: number) => {
    if (a === undefined || b === undefined || b === 0) return;
    const value = a / b;
    checks.push({ label, value, target: `${op} ${bound}`, met: op === '≥' ? value >= bound : value <= bound });
  };
  const embedded = by('ours-embedded');
  const distributed = by('ours-distributed');
  const crawlee = by('crawlee');
  const ceiling = by('ceiling');
  ratio('ours embedded ÷ Crawlee, pages/s', embedded?.pagesPerSecond, crawlee?.pagesPerSecond, '≥', 8);
  ratio('ours distributed ÷ Crawlee, pages/s', distributed?.pagesPerSecond, crawlee?.pagesPerSecond, '≥', 6);
  ratio('ours embedded ÷ ceiling, pages/s', embedded?.pagesPerSecond, ceiling?.pagesPerSecond, '≥', 0.5);
  ratio('ours embedded peak RSS ÷ Crawlee peak RSS', embedded?.peakRssBytes, crawlee?.peakRssBytes, '≤', 0.25);
  ratio('ours distributed peak RSS (sum of processes) ÷ Crawlee peak RSS', distributed?.peakRssBytes, crawlee?.peakRssBytes, '≤', 0.25);
  const onCluster = by('ours-distributed-cluster');
  ratio('ours distributed on the cluster ÷ ours distributed on one node, pages/s', onCluster?.pagesPerSecond, distributed?.pagesPerSecond, '≥', 0.9);
  // What the distributed shape costs over the embedded one for the same pages: its nine processes' CPU summed
  // (Redis, S3 and PostgreSQL reported apart), and the Redis commands of every hop.
  ratio('ours distributed ÷ ours embedded, CPU ms a page', distributed?.cpuMsPerPage, embedded?.cpuMsPerPage, '≤', 1.5);
  ratio('ours distributed on the cluster ÷ ours embedded, CPU ms a page', onCluster?.cpuMsPerPage, embedded?.cpuMsPerPage, '≤', 1.5);
  const commands = (run: CrawlRun | undefined) => (run?.redis && run.pages ? run.redis.commands / run.pages : undefined);
  ratio('ours distributed, Redis commands a page (one node)', commands(distributed), 1, '≤', 50);
  ratio('ours distributed on the cluster, Redis commands a page (the masters)', commands(onCluster), 1, '≤', 60);
  const perMaster = onCluster?.redis?.keysBytesPerMaster?.map((m) => m.bytes);
  if (perMaster?.length) {
    // Of the crawl's keys' memory (MEMORY USAGE), not of used_memory's growth: both agreed within 0.02 when
    // measured (1.08–1.16 over three runs), but a master's used_memory also moves with whatever else a shared
    // cluster is holding meanwhile, its keys' memory only with the crawl's.
    const mean = perMaster.reduce((n, b) => n + b, 0) / perMaster.length;
    ratio('memory balance across masters (the crawl keys’ MEMORY USAGE per master), max ÷ mean', Math.max(...perMaster), mean, '≤', 1.2);
  }
  const bound = polite.hosts / (polite.delayMs / 1000);
  // The bound is on requests (one per host per delay); a page is a request answered 200 with HTML, and every
  // crawler also spends requests on robots.txt, redirects and missing pages, so pages/s stays a little under
  // requests/s: both are shown.
  for (const run of runs.filter((r) => r.id.startsWith('polite-'))) {
    const ours = run.id.startsWith('polite-ours');
    const pages = run.pagesPerSecond / bound;
    const requests = run.web.requests / run.seconds / bound;
    checks.push({ label: `${run.label}: pages/s ÷ bound (${bound}/s)`, value: pages, target: ours ? '≥ 0.9' : 'reported', met: ours ? pages >= 0.9 : true });
    checks.push({ label: `${run.label}: requests/s ÷ bound (${bound}/s)`, value: requests, target: ours ? '≥ 0.9' : 'reported', met: ours ? requests >= 0.9 : true });
  }
  for (const run of runs.filter((r) => r.id.includes('ours'))) {
    const violations = run.web.robotsViolations + run.web.beforeRobots + Math.max(0, run.web.maxInFlightPerHost - 1);
    checks.push({ label: `${run.label}: robots or politeness violations seen by the web`, value: violations, target: '= 0', met: violations === 0 });
  }
  return checks;
}
