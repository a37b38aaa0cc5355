import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderChart } from './chart';
import { renderMarkdown } from './markdown';
import type { BenchResults } from './results';

/** bench.json (everything measured), bench.md and bench.svg (read from it) side by side in `dir`. */
export function writeResults(results: BenchResults, dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'bench.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(dir, 'bench.md'), `${renderMarkdown(results)}\n`);
  writeFileSync(join(dir, 'bench.svg'), renderChart(results));
}
