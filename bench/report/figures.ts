import type { ScaleResults } from '../scale/scale-report';
import { num } from './format';
import type { BenchResults, CrawlRun } from './results';

/**
 * The headline figures the README and the docs quote, each written from what it quotes: the committed
 * benchmark run (bench/results/bench.json), the million-page runs (bench/results/scale.json) and the bottom
 * line of docs/estimates.md. Each sits in its file between `<!-- name:begin -->` and `<!-- name:end -->`;
 * `npm run figures` rewrites the blocks, and a test fails while any block says something else.
 */
export interface FigureSources {
  bench: BenchResults;
  scale: ScaleResults;
  /** docs/estimates.md. */
  estimates: string;
}

/** Marked blocks by file, each with the text it must hold. */
export const FIGURE_FILES: Record<string, (sources: FigureSources) => Record<string, string>> = {
  'README.md': (s) => ({
    'bench-figures': benchFigures(s.bench),
    'estimate-figures': estimateFigures(s.estimates),
    'scale-figures': scaleFigures(s.scale),
  }),
  'docs/performance.md': (s) => ({
    'bench-figures': benchFigures(s.bench),
    'scale-figures': scaleFigures(s.scale),
  }),
};

/** The committed run: date, embedded pages/s, cores, ratio to Crawlee and share of its memory. */
function benchFigures(results: BenchResults): string {
  const run = (id: string): CrawlRun => {
    const found = results.runs.find((r) => r.id === id);
    if (!found) throw new Error(`bench/results/bench.json has no run ${id}`);
    return found;
  };
  const [ours, crawlee] = [run('ours-embedded'), run('crawlee')];
  return (
    `${results.at.slice(0, 10)}: ${num(ours.pagesPerSecond)} pages/s in one process on ${results.machine.cpus} cores, robots.txt obeyed and ` +
    `one request per host, ${num(ours.pagesPerSecond / crawlee.pagesPerSecond)}× Crawlee's CheerioCrawler at ${num(ours.peakRssBytes / crawlee.peakRssBytes)} of its memory`
  );
}

/** Machines, cores, object storage and PostgreSQL for 10⁹ pages a month, as the estimates' bottom line sizes them. */
function estimateFigures(estimates: string): string {
  const start = estimates.indexOf('## 8. The bottom line');
  if (start < 0) throw new Error('docs/estimates.md has no "## 8. The bottom line" section');
  const bottomLine = estimates.slice(start);
  const row = (resource: string) => {
    const line = bottomLine.split('\n').find((l) => l.startsWith(`| ${resource} |`));
    if (!line) throw new Error(`docs/estimates.md's bottom line has no row "${resource}"`);
    return line;
  };
  const [machines, cores] = capture(row('Service processes'), /≈ \d+ cores = (\d+) machines of (\d+) cores/, 'the Service processes row');
  const [objectTb] = capture(row('Object storage'), /≈ ([\d.]+) TB a month/, 'the Object storage row');
  const [recordsTb] = capture(row('PostgreSQL (the per-page records)'), /≈ ([\d.]+) TB of disk a month/, 'the PostgreSQL row');
  return (
    `1 billion pages a month needs about ${machines} machines of ${cores} cores for the services, sized for the peak, ` +
    `${objectTb} TB of object storage a month and a PostgreSQL server taking ${recordsTb} TB a month`
  );
}

/** Each complete million-page run: pages, hosts, duration, and what the web counted lost or fetched twice. */
function scaleFigures(results: ScaleResults): string {
  const runs = results.runs.filter((r) => r.complete);
  if (runs.length === 0) throw new Error('bench/results/scale.json has no complete run');
  return runs
    .map((r) => {
      const where = r.shape === 'embedded' ? 'in one process' : 'with every service its own process';
      return (
        `${results.at.slice(0, 10)}: ${num(r.web.pagesFetched)} pages of ${num(results.settings.hosts)} hosts ${where} in ${duration(r.seconds)}, ` +
        `${num(r.lost.count)} lost, ${num(r.web.repeatRequests)} fetched twice, ${num(r.web.robotsViolations + r.web.tooClose)} robots.txt or politeness violations`
      );
    })
    .join('; ');
}

/** The text with every marked block set to its figures; throws when a block is missing. */
export function withFigures(text: string, file: string, blocks: Record<string, string>): string {
  let out = text;
  for (const [name, figures] of Object.entries(blocks)) {
    const pattern = new RegExp(`(<!-- ${name}:begin -->)[\\s\\S]*?(<!-- ${name}:end -->)`);
    if (!pattern.test(out)) throw new Error(`${file} has no <!-- ${name}:begin --> … <!-- ${name}:end --> block`);
    out = out.replace(pattern, (_, begin: string, end: string) => `${begin}${figures}${end}`);
  }
  return out;
}

function capture(text: string, pattern: RegExp, where: string): string[] {
  const found = pattern.exec(text);
  if (!found) throw new Error(`${where} no longer reads as ${pattern}: "${text}"`);
  return found.slice(1);
}

function duration(seconds: number): string {
  const minutes = Math.round(seconds / 60);
  return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}
