import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { num } from '../../bench/report/format';
import type { BenchResults, CrawlRun } from '../../bench/report/results';

const ROOT = join(__dirname, '../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** The README's text between `<!-- name:begin -->` and `<!-- name:end -->`, on one line. */
function marked(readme: string, name: string): string {
  const found = new RegExp(`<!-- ${name}:begin -->([\\s\\S]*?)<!-- ${name}:end -->`).exec(readme);
  if (!found) throw new Error(`README.md has no <!-- ${name}:begin --> … <!-- ${name}:end --> block`);
  return found[1].replace(/\s+/g, ' ').trim();
}

/** The numbers `pattern` captures in `text`, or a failure that quotes the text it was looked for in. */
function figures(text: string, pattern: RegExp, where: string): string[] {
  const found = pattern.exec(text);
  if (!found) throw new Error(`${where} no longer reads as ${pattern}: "${text}"`);
  return found.slice(1);
}

/**
 * The README's headline figures are the committed benchmark run's (bench/results/bench.json, formatted as
 * bench.md formats them) and the machines docs/estimates.md sizes, so that a new run or estimate that is
 * not carried into the README fails here rather than leaving it quoting an older one.
 */
describe('the README headline figures', () => {
  const readme = read('README.md');

  it('are the committed benchmark run: pages/s, cores, ratio to Crawlee and share of its memory', () => {
    const results: BenchResults = JSON.parse(read('bench/results/bench.json'));
    const run = (id: string): CrawlRun => {
      const found = results.runs.find((r) => r.id === id);
      if (!found) throw new Error(`bench/results/bench.json has no run ${id}`);
      return found;
    };
    const [ours, crawlee] = [run('ours-embedded'), run('crawlee')];
    const [date, pagesPerSecond, cores, timesCrawlee, memory] = figures(
      marked(readme, 'bench-figures'),
      /^(\d{4}-\d\d-\d\d): ([\d,]+) pages\/s in one process on (\d+) cores, .* ([\d.]+)× Crawlee's CheerioCrawler at ([\d.]+) of its memory$/,
      'the README bench-figures block',
    );
    expect({ date, pagesPerSecond, cores, timesCrawlee, memory }).toEqual({
      date: results.at.slice(0, 10),
      pagesPerSecond: num(ours.pagesPerSecond),
      cores: String(results.machine.cpus),
      timesCrawlee: num(ours.pagesPerSecond / crawlee.pagesPerSecond),
      memory: num(ours.peakRssBytes / crawlee.peakRssBytes),
    });
  });

  it('size the machines as the bottom line of docs/estimates.md does', () => {
    const estimates = read('docs/estimates.md');
    const bottomLine = estimates.slice(estimates.indexOf('## 8. The bottom line'));
    const row = (resource: string) => {
      const line = bottomLine.split('\n').find((l) => l.startsWith(`| ${resource} |`));
      if (!line) throw new Error(`docs/estimates.md's bottom line has no row "${resource}"`);
      return line;
    };
    const [machines, coresEach] = figures(row('Service processes'), /≈ \d+ cores = (\d+) machines of (\d+) cores/, 'the Service processes row');
    const [objectTb] = figures(row('Object storage'), /≈ ([\d.]+) TB a month/, 'the Object storage row');
    const [recordsTb] = figures(row('PostgreSQL (the per-page records)'), /≈ ([\d.]+) TB of disk a month/, 'the PostgreSQL row');
    const said = figures(
      marked(readme, 'estimate-figures'),
      /^1 billion pages a month needs about (\d+) machines of (\d+) cores .* ([\d.]+) TB of object storage a month .* ([\d.]+) TB a month$/,
      'the README estimate-figures block',
    );
    expect(said).toEqual([machines, coresEach, objectTb, recordsTb]);
  });
});
