/**
 * `npm run figures`: writes the headline figures of README.md and the docs from bench/results/ and
 * docs/estimates.md (see report/figures.ts); test/bench/headline-figures.test.ts fails while any is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIGURE_FILES, type FigureSources, withFigures } from './report/figures';

const ROOT = join(__dirname, '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

function main(): void {
  const sources: FigureSources = {
    bench: JSON.parse(read('bench/results/bench.json')),
    scale: JSON.parse(read('bench/results/scale.json')),
    estimates: read('docs/estimates.md'),
  };
  const stale: string[] = [];
  for (const [file, blocks] of Object.entries(FIGURE_FILES)) {
    const text = read(file);
    const written = withFigures(text, file, blocks(sources));
    if (written === text) continue;
    stale.push(file);
    writeFileSync(join(ROOT, file), written);
  }
  console.log(stale.length ? `wrote: ${stale.join(', ')}` : 'figures up to date');
}

main();
