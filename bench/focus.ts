/**
 * The focused crawl's yield (`npm run bench:focus`): relevant pages per 1,000 fetched, with the focus plugin
 * and without it (breadth-first), from the same seed with the same page budget, on the planted web
 * (test/web/planted-web.ts: topic clusters half-way round a ring of hosts). Not a timed test: the figures
 * go to docs/performance.md.
 *
 *   BENCH_FOCUS_HOSTS (400) BENCH_FOCUS_PAGES_PER_HOST (20) BENCH_FOCUS_CLUSTERS (4) BENCH_FOCUS_CLUSTER_SIZE (6)
 *   BENCH_FOCUS_LONG_LINKS (0.01) BENCH_FOCUS_BUDGET (1000) BENCH_FOCUS_SEEDS (1 to 12: one web per seed; a single web is a lottery)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crawlPlanted } from '../test/support/planted-crawl';
import { PlantedWeb } from '../test/web/planted-web';

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

async function main() {
  const seeds = (process.env.BENCH_FOCUS_SEEDS ?? '1,2,3,4,5,6,7,8,9,10,11,12').split(',').map(Number);
  const totals = { plain: [0, 0], focused: [0, 0] };
  for (const seed of seeds) {
    const [plain, focused] = await compare(seed);
    totals.plain = [totals.plain[0] + plain.relevant, totals.plain[1] + plain.fetched];
    totals.focused = [totals.focused[0] + focused.relevant, totals.focused[1] + focused.fetched];
  }
  const rate = ([relevant, fetched]: number[]) => (1000 * relevant) / Math.max(1, fetched);
  console.log(
    `all webs: breadth-first ${rate(totals.plain).toFixed(1)} per 1,000, focused ${rate(totals.focused).toFixed(1)} per 1,000: ${(rate(totals.focused) / Math.max(1e-9, rate(totals.plain))).toFixed(1)}×`,
  );
}

async function compare(seed: number) {
  const web = await PlantedWeb.start({
    hosts: num('BENCH_FOCUS_HOSTS', 400),
    pagesPerHost: num('BENCH_FOCUS_PAGES_PER_HOST', 20),
    clusters: num('BENCH_FOCUS_CLUSTERS', 4),
    clusterSize: num('BENCH_FOCUS_CLUSTER_SIZE', 6),
    longLinks: num('BENCH_FOCUS_LONG_LINKS', 0.01),
    seed,
  });
  const budget = num('BENCH_FOCUS_BUDGET', 1000);
  const total = web.options.hosts * web.options.pagesPerHost;
  console.log(
    `planted web ${seed}: ${web.options.hosts} hosts × ${web.options.pagesPerHost} pages = ${total}; relevant ${web.relevantPages()} (${((1000 * web.relevantPages()) / total).toFixed(1)} per 1,000); budget ${budget}`,
  );
  const rows = [];
  try {
    for (const focus of [false, true]) {
      const dir = mkdtempSync(join(tmpdir(), 'bench-focus-'));
      try {
        const started = performance.now();
        const crawl = await crawlPlanted(web, dir, { focus, maxPages: budget });
        const perThousand = (1000 * crawl.relevant) / Math.max(1, crawl.fetched.length);
        const firstRelevant = crawl.fetched.findIndex((url) => web.isRelevant(url));
        rows.push({
          crawl: focus ? 'focused' : 'breadth-first',
          fetched: crawl.fetched.length,
          relevant: crawl.relevant,
          perThousand,
          firstRelevant,
          seconds: (performance.now() - started) / 1000,
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    await web.close();
  }
  for (const r of rows) {
    console.log(
      `${r.crawl.padEnd(14)} fetched ${r.fetched}  relevant ${r.relevant}  = ${r.perThousand.toFixed(1)} per 1,000  (${r.firstRelevant < 0 ? 'none found' : `first relevant at fetch #${r.firstRelevant + 1}`}, ${r.seconds.toFixed(1)} s)`,
    );
  }
  const [plain, focused] = rows;
  console.log(`focused / breadth-first: ${plain.perThousand > 0 ? `${(focused.perThousand / plain.perThousand).toFixed(1)}×` : `∞ (breadth-first found none)`}`);
  return rows;
}

void main().catch((error) => {
  console.error(error);
  process.exit(1);
});
