import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderChart } from '../../bench/report/chart';
import { renderMarkdown } from '../../bench/report/markdown';
import type { BenchResults, CrawlRun } from '../../bench/report/results';
import { writeResults } from '../../bench/report/write-results';
import { benchCrawlRun } from '../support/bench-crawl-run';
import { removeTempDirs, tempDir } from '../support/temp-dirs';

function run(id: string, label: string, pagesPerSecond: number, extra: Partial<CrawlRun> = {}): CrawlRun {
  return benchCrawlRun(id, pagesPerSecond, { label, ...extra });
}

const results: BenchResults = {
  at: '2024-05-14T08:00:00.000Z',
  machine: { cpus: 2, model: 'Test CPU <fake> & co', memoryGiB: 8, node: 'v20.0.0', redis: '7.2.4' },
  web: { hosts: 10, pagesPerHost: 100, meanPageBytes: 30_000, latencyMs: 10, buildMs: 900 },
  runs: [
    run('ours-distributed', 'ours, distributed', 812.5, {
      infrastructure: [{ name: 'redis-server', cpuMs: 900, peakRssBytes: 40 * 2 ** 20 }],
      redis: { usedMemoryDelta: 3 * 2 ** 20, peakUsedMemory: 9 * 2 ** 20, commands: 42_000, cpuMs: 900 },
    }),
    run('crawlee', 'Crawlee <Cheerio> & "friends"', 95.25, { complete: false }),
    run('polite-ours-embedded', 'polite: ours, embedded', 9.7),
  ],
  micro: [
    { id: 'frontier.dispatch-rate', label: 'Frontier dispatch rate', value: 18_330.4, unit: 'URLs/s', command: 'npm run bench:frontier' },
    { id: 'url-seen.redis-bloom-bytes', label: 'URL-seen bytes per URL, Bloom 1 %', value: 1.1984, unit: 'B', command: 'npm run bench:url-seen' },
  ],
  targets: [
    { label: 'ours distributed ÷ Crawlee, pages/s', value: 8.53, target: '≥ 4', met: true },
    { label: 'ours peak RSS ÷ Crawlee peak RSS', value: 1, target: '≤ 0.25', met: false },
  ],
};

/**
 * Well-formed XML, near enough for SVG we write ourselves: every tag closed in order, attributes quoted, and
 * no bare `<` or `&` in text or attribute values.
 */
function xmlProblems(xml: string): string[] {
  const problems: string[] = [];
  const stack: string[] = [];
  const attribute = /\s+[\w:-]+="[^"<&]*(?:&(?:amp|lt|gt|quot|apos);[^"<&]*)*"/y;
  for (const token of xml.split(/(<[^>]*>)/)) {
    if (!token.startsWith('<')) {
      if (/[<>]|&(?!(?:amp|lt|gt|quot|apos);)/.test(token)) problems.push(`bad text ${JSON.stringify(token)}`);
      continue;
    }
    const close = /^<\/([\w:-]+)\s*>$/.exec(token);
    if (close) {
      if (stack.pop() !== close[1]) problems.push(`${token} closes nothing open`);
      continue;
    }
    const open = /^<([\w:-]+)/.exec(token);
    if (!open) {
      problems.push(`bad tag ${token}`);
      continue;
    }
    const end = token.endsWith('/>') ? token.length - 2 : token.length - 1;
    let at = open[0].length;
    for (attribute.lastIndex = at; attribute.lastIndex < end && attribute.test(token); ) at = attribute.lastIndex;
    if (token.slice(at, end).trim()) problems.push(`bad attributes in ${token}`);
    if (!token.endsWith('/>')) stack.push(open[1]);
  }
  if (stack.length) problems.push(`left open: ${stack.join(', ')}`);
  return problems;
}

describe('bench report', () => {
  afterAll(removeTempDirs);

  it('the Markdown names every run and marks each target met or not', () => {
    const md = renderMarkdown(results);
    for (const r of results.runs) expect(md).toContain(r.label);
    expect(md).toContain('| ours distributed ÷ Crawlee, pages/s | 8.53 | ≥ 4 | ✓ |');
    expect(md).toContain('| ours peak RSS ÷ Crawlee peak RSS | 1 | ≤ 0.25 | ✗ |');
    expect(md).toContain('| Frontier dispatch rate | 18,330 | URLs/s | `npm run bench:frontier` |');
    expect(md).toContain('redis-server');
  });

  it('the Markdown gives what the machine charged for kernel crossings when the run measured it', () => {
    expect(renderMarkdown(results)).not.toContain('Kernel crossings');
    const costs = { pageFaultUs: 13.27, readUs: 1.894, processRoundTripUs: 81.6 };
    const md = renderMarkdown({ ...results, machine: { ...results.machine, costs } });
    expect(md).toContain('Kernel crossings, measured before the runs: a page fault 13.3 µs, a 1-byte read 1.89 µs, a round trip to another Node process 82 µs.');
  });

  it('a run on a Redis Cluster adds its per-page figures beside the one-node run, and a table of its servers', () => {
    const master = (port: number, mib: number) => ({
      address: `127.0.0.1:${port}`,
      role: 'master' as const,
      usedMemoryDelta: mib * 2 ** 20,
      peakUsedMemory: 2 * mib * 2 ** 20,
      commands: 20_000,
      cpuMs: 400,
    });
    const onCluster = run('ours-distributed-cluster', 'ours, on the cluster', 700, {
      redis: {
        usedMemoryDelta: 6 * 2 ** 20,
        peakUsedMemory: 12 * 2 ** 20,
        commands: 60_000,
        cpuMs: 1200,
        replicaCpuMs: 300,
        nodes: [master(7000, 1), master(7001, 2), master(7002, 3), { ...master(7003, 1), role: 'replica', cpuMs: 300, commands: 9000 }],
        keysBytesPerMaster: [7000, 7001, 7002].map((port) => ({ address: `127.0.0.1:${port}`, keys: 400, bytes: 2 ** 20 })),
      },
    });
    const md = renderMarkdown({ ...results, runs: [...results.runs, onCluster] });
    expect(md).toContain('| ours, on the cluster | 3 masters, 1 replicas | 700 | 2.50 | 1.20 | 0.30 | 60 |');
    expect(md).toContain('| ours, distributed | one node | 813 | 2.50 | 0.90 | — | 42 |');
    expect(md).toContain('| ours, on the cluster | 127.0.0.1:7002 | master | 3.0 | 6.0 | 1.0 | 400 | 0.4 | 20,000 |');
    expect(md).toContain('| ours, on the cluster | 127.0.0.1:7003 | replica | 1.0 | 2.0 | — | — | 0.3 | 9,000 |');
    expect(renderMarkdown(results)).not.toContain('Redis Cluster');
  });

  it('the SVG is well-formed and has one bar per run in each of its three panels', () => {
    const svg = renderChart(results);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(xmlProblems(svg)).toEqual([]);
    expect(svg.match(/<rect class="bar"/g)).toHaveLength(3 * results.runs.length);
    expect(svg).toContain('Crawlee &lt;Cheerio&gt; &amp; &quot;friends&quot;');
  });

  it('the well-formedness check catches what it is there for', () => {
    expect(xmlProblems('<svg><g></svg>')).not.toEqual([]);
    expect(xmlProblems('<svg><text>a & b</text></svg>')).not.toEqual([]);
    expect(xmlProblems('<svg><rect x="1" y=2/></svg>')).not.toEqual([]);
  });

  it('writeResults writes bench.json, bench.md and bench.svg, creating the directory', () => {
    const dir = join(tempDir('bench-report-'), 'results', 'nested');
    writeResults(results, dir);
    expect(readdirSync(dir).sort()).toEqual(['bench.json', 'bench.md', 'bench.svg']);
    expect(JSON.parse(readFileSync(join(dir, 'bench.json'), 'utf8'))).toEqual(results);
    expect(readFileSync(join(dir, 'bench.md'), 'utf8')).toBe(`${renderMarkdown(results)}\n`);
    expect(readFileSync(join(dir, 'bench.svg'), 'utf8')).toBe(renderChart(results));
  });
});
