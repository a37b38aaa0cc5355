import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIGURE_FILES, type FigureSources, withFigures } from '../../bench/report/figures';

const ROOT = join(__dirname, '../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

const sources = (): FigureSources => ({
  bench: JSON.parse(read('bench/results/bench.json')),
  scale: JSON.parse(read('bench/results/scale.json')),
  estimates: read('docs/estimates.md'),
});

/**
 * The headline figures of the README and the docs (pages/s, the ratio to Crawlee, memory, the million-page
 * runs, machines for 10⁹ pages) are what `npm run figures` writes from bench/results/ and docs/estimates.md:
 * a new run or estimate that is not carried into the text fails here instead of leaving it quoting an older one.
 */
describe('the headline figures of the README and the docs', () => {
  for (const [file, blocks] of Object.entries(FIGURE_FILES)) {
    it(`are current in ${file} (npm run figures writes them)`, () => {
      const text = read(file);
      expect(withFigures(text, file, blocks(sources()))).toBe(text);
    });
  }

  it('go stale when a result changes: a new benchmark run, a new estimate', () => {
    const readme = read('README.md');
    const now = sources();
    const faster = structuredClone(now);
    faster.bench.runs.find((r) => r.id === 'ours-embedded')!.pagesPerSecond *= 2;
    expect(withFigures(readme, 'README.md', FIGURE_FILES['README.md'](faster))).not.toBe(readme);
    const more = { ...now, estimates: now.estimates.replace(/= (\d+) machines of/, (_, n: string) => `= ${Number(n) + 1} machines of`) };
    expect(more.estimates).not.toBe(now.estimates);
    expect(withFigures(readme, 'README.md', FIGURE_FILES['README.md'](more))).not.toBe(readme);
  });

  it('refuse a file that lost its marked block, naming it', () => {
    expect(() => withFigures('no markers here', 'README.md', { 'bench-figures': 'x' })).toThrow(/README.md has no <!-- bench-figures:begin -->/);
  });
});
