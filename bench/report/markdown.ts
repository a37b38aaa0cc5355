import { mib, num } from './format';
import type { BenchResults, CrawlRun, ProcessFigures } from './results';

/** bench.md: the machine and the web, then one table per kind of figure in bench.json. */
export function renderMarkdown(results: BenchResults): string {
  const { machine, web } = results;
  return [
    `# Benchmark, ${results.at}`,
    '',
    `Machine: ${machine.cpus} CPUs (${machine.model}), ${num(machine.memoryGiB)} GiB, Node ${machine.node}${machine.redis ? `, Redis ${machine.redis}` : ''}.`,
    ...(machine.costs
      ? [
          `Kernel crossings, measured before the runs: a page fault ${num(machine.costs.pageFaultUs, 1)} µs, a 1-byte read ${num(machine.costs.readUs, 2)} µs, ` +
            `a round trip to another Node process ${num(machine.costs.processRoundTripUs, 0)} µs.`,
        ]
      : []),
    `Benchmark web${web.shape ? ` (${web.shape}${web.shape === 'real' ? `, median ${num(web.pageKb ?? 30)} KB` : ''})` : ''}: ${num(web.hosts)} hosts × ${num(web.pagesPerHost)} pages, mean page ${num(web.meanPageBytes / 1024, 1)} KB, ` +
      `${num(web.latencyMs)} ms latency per answer, built in ${num(web.buildMs)} ms.`,
    ...section('Crawl runs', runsTable(results.runs)),
    ...notes(results.runs),
    ...section('Processes', processTable(results.runs.map((r) => [r, r.processes]))),
    ...section('Redis Cluster: per page, beside one node', clusterTable(results.runs)),
    ...section('Redis Cluster: each server', serversTable(results.runs)),
    ...section('Redis commands a page, by where they came from (BENCH_REDIS_BREAKDOWN=1, under MONITOR)', sourcesTable(results.runs)),
    ...section('Infrastructure (not in the runs’ CPU and RSS)', processTable(results.runs.map((r) => [r, r.infrastructure ?? []]))),
    ...section(
      'Micro-benchmarks',
      table(
        ['figure', 'value', 'unit', 'command'],
        results.micro.map((m) => [m.label, num(m.value), m.unit, `\`${m.command}\``]),
      ),
    ),
    ...section(
      'Targets',
      table(
        ['target', 'value', 'wanted', 'met'],
        results.targets.map((t) => [t.label, num(t.value), t.target, t.target === 'reported' ? '—' : t.met ? '✓' : '✗']),
      ),
    ),
  ].join('\n');
}

/** A titled table, or nothing when it has no rows. */
function section(title: string, rows: string[]): string[] {
  return rows.length ? ['', `## ${title}`, '', ...rows] : [];
}

function table(head: string[], rows: string[][]): string[] {
  if (!rows.length) return [];
  const line = (cells: string[]) => `| ${cells.map(cell).join(' | ')} |`;
  return [line(head), `|${head.map(() => '---').join('|')}|`, ...rows.map(line)];
}

/** A pipe or a line break in a label would end the cell or the row. */
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

function runsTable(runs: CrawlRun[]): string[] {
  // Redis columns only when some run used Redis: the embedded shape and the peers do not.
  const redis = runs.some((r) => r.redis);
  const head = [
    'run',
    'settings',
    'pages',
    'requests',
    's',
    'pages/s',
    'CPU ms/page',
    'peak RSS MiB (sum)',
    ...(redis ? ['Redis MiB Δ', 'Redis commands/page'] : []),
    'max in flight per host',
    'min interval per host (ms)',
    'robots violations',
    'repeat requests',
    'complete',
  ];
  return table(
    head,
    runs.map((r) => [
      r.label,
      r.settings,
      num(r.pages),
      num(r.web.requests),
      num(r.seconds, 1),
      num(r.pagesPerSecond),
      num(r.cpuMsPerPage, 2),
      mib(r.peakRssBytes, 0),
      ...(redis ? [r.redis ? mib(r.redis.usedMemoryDelta, 1) : '—', r.redis && r.pages ? num(r.redis.commands / r.pages) : '—'] : []),
      num(r.web.maxInFlightPerHost),
      num(r.web.minIntervalMs),
      num(r.web.robotsViolations),
      num(r.web.repeatRequests),
      r.complete ? 'yes' : '**no** (cut off)',
    ]),
  );
}

/** Only when a run was on a cluster: its figures per page, with every run on one Redis node beside it. */
function clusterTable(runs: CrawlRun[]): string[] {
  if (!runs.some((r) => r.redis?.nodes)) return [];
  const perPage = (r: CrawlRun, n: number | undefined, digits?: number) => (n === undefined || !r.pages ? '—' : num(n / r.pages, digits));
  return table(
    ['run', 'Redis', 'pages/s', 'CPU ms/page', 'Redis CPU ms/page (masters)', 'replicas’ CPU ms/page', 'Redis commands/page (masters)'],
    runs
      .filter((r) => r.redis)
      .map((r) => [
        r.label,
        r.redis!.nodes
          ? `${r.redis!.nodes.filter((n) => n.role === 'master').length} masters, ${r.redis!.nodes.filter((n) => n.role === 'replica').length} replicas`
          : 'one node',
        num(r.pagesPerSecond),
        num(r.cpuMsPerPage, 2),
        perPage(r, r.redis!.cpuMs, 2),
        perPage(r, r.redis!.replicaCpuMs, 2),
        perPage(r, r.redis!.commands, 0),
      ]),
  );
}

/** Each master and replica of a cluster run: its memory over the run, the crawl keys' share, CPU, commands. */
function serversTable(runs: CrawlRun[]): string[] {
  return table(
    ['run', 'server', 'role', 'used memory Δ MiB', 'peak used memory MiB', 'crawl keys MiB (MEMORY USAGE)', 'crawl keys', 'CPU s', 'commands'],
    runs.flatMap((r) =>
      (r.redis?.nodes ?? []).map((n) => {
        const keys = r.redis!.keysBytesPerMaster?.find((m) => m.address === n.address);
        return [
          r.label,
          n.address,
          n.role,
          mib(n.usedMemoryDelta, 1),
          mib(n.peakUsedMemory, 1),
          keys ? mib(keys.bytes, 1) : '—',
          keys ? num(keys.keys) : '—',
          num(n.cpuMs / 1000, 1),
          num(n.commands),
        ];
      }),
    ),
  );
}

/** Sources of fewer commands than this a page are summed into one row. */
const SOURCE_MIN_PER_PAGE = 0.1;

function sourcesTable(runs: CrawlRun[]): string[] {
  return table(
    ['run', 'where', 'calls a page', 'commands a page'],
    runs.flatMap((run) => {
      const sources = run.redis?.bySource;
      if (!sources || !run.pages) return [];
      const perPage = (n: number) => num(n / run.pages, 2);
      const shown = sources.filter((s) => s.commands / run.pages >= SOURCE_MIN_PER_PAGE);
      const rest = sources.filter((s) => !shown.includes(s));
      const total = sources.reduce((n, s) => n + s.commands, 0);
      return [
        ...shown.map((s) => [run.label, s.where, perPage(s.calls), perPage(s.commands)]),
        ...(rest.length ? [[run.label, `${rest.length} others`, perPage(rest.reduce((n, s) => n + s.calls, 0)), perPage(rest.reduce((n, s) => n + s.commands, 0))]] : []),
        [run.label, '**all**', '', `**${perPage(total)}**`],
      ];
    }),
  );
}

function notes(runs: CrawlRun[]): string[] {
  const lines = runs.flatMap((r) => (r.notes ?? []).map((n) => `- ${r.label}: ${n}`));
  return lines.length ? ['', ...lines] : [];
}

function processTable(groups: [CrawlRun, ProcessFigures[]][]): string[] {
  return table(
    ['run', 'process', 'CPU s', 'peak RSS MiB'],
    groups.flatMap(([run, processes]) => processes.map((p) => [run.label, p.name, num(p.cpuMs / 1000, 1), mib(p.peakRssBytes, 0)])),
  );
}
