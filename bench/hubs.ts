/**
 * Hub revisits (`npm run bench:hubs`): new URLs discovered per recrawl fetch, FRONTIER_RECRAWL_POLICY=hubs
 * vs the default `adaptive`, with the same page budget on the same local web: `hubs-0.test`, whose hub
 * pages gain an item link every BENCH_HUBS_LINK_EVERY_MS while its clock pages change on every request
 * without adding a link (test/web/dedicated-hosts.ts). Each policy crawls a fresh copy of the web with the
 * embedded runner; the web counts, per request, the links it served for the first time. A recrawl fetch is
 * a request for a page requested before. Not a timed test: the figures go to docs/performance.md.
 *
 *   BENCH_HUBS_HUBS (4) BENCH_HUBS_CLOCKS (16) BENCH_HUBS_LINK_EVERY_MS (1000) BENCH_HUBS_BUDGET (600)
 *   BENCH_HUBS_DELAY_S (0.005: per-host politeness, one host) BENCH_HUBS_RECRAWL_MS (2000,500,32000: initial, min, max)
 *
 * The defaults keep the crawl below the host's pace, so that what is fetched is what the policy makes due:
 * a crawl held back by politeness fetches whatever its queues hold, and any policy scores alike.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crawlTestWeb } from '../test/support/test-web-crawl';
import { TestWeb } from '../test/web/test-web';

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

interface Result {
  policy: string;
  fetched: number;
  recrawls: number;
  hubRecrawls: number;
  clockRecrawls: number;
  newByRecrawls: number;
  seconds: number;
  /** The crawl's hub and leaf decisions (`frontier.recrawl-hub`, `frontier.recrawl-leaf`). */
  decisions: string;
}

async function crawl(policy: 'adaptive' | 'hubs'): Promise<Result> {
  const web = await TestWeb.start({
    hosts: 12,
    growingHubs: { hubs: num('BENCH_HUBS_HUBS', 4), clocks: num('BENCH_HUBS_CLOCKS', 16), linkEveryMs: num('BENCH_HUBS_LINK_EVERY_MS', 1000), initialItems: 3 },
  });
  const dir = mkdtempSync(join(tmpdir(), 'bench-hubs-'));
  const [initial, min, max] = (process.env.BENCH_HUBS_RECRAWL_MS ?? '2000,500,32000').split(',');
  const started = performance.now();
  try {
    const summary = await crawlTestWeb(web, dir, {
      args: [`${web.origin('hubs-0.test')}/`, '--recrawl', '--max-pages', String(num('BENCH_HUBS_BUDGET', 600))],
      delaySeconds: num('BENCH_HUBS_DELAY_S', 0.005),
      env: { FRONTIER_RECRAWL_POLICY: policy, FRONTIER_RECRAWL_INITIAL_MS: initial, FRONTIER_RECRAWL_MIN_MS: min, FRONTIER_RECRAWL_MAX_MS: max },
      timeoutMs: 600_000,
    });
    const asked = new Set<string>();
    const result: Result = { policy, fetched: web.hubServes.length, recrawls: 0, hubRecrawls: 0, clockRecrawls: 0, newByRecrawls: 0, seconds: 0, decisions: '' };
    const totals = summary.totals ?? {};
    result.decisions = `hub ${totals['frontier.recrawl-hub'] ?? 0}, leaf ${totals['frontier.recrawl-leaf'] ?? 0}`;
    for (const serve of web.hubServes) {
      if (asked.has(serve.path)) {
        result.recrawls++;
        result.newByRecrawls += serve.newLinks;
        if (serve.path.startsWith('/hub/')) result.hubRecrawls++;
        if (serve.path.startsWith('/clock/')) result.clockRecrawls++;
      }
      asked.add(serve.path);
    }
    result.seconds = (performance.now() - started) / 1000;
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await web.close();
  }
}

async function main() {
  const rows = [await crawl('adaptive'), await crawl('hubs')];
  for (const r of rows) {
    const perFetch = r.newByRecrawls / Math.max(1, r.recrawls);
    console.log(
      `${r.policy.padEnd(9)} pages ${r.fetched}  recrawl fetches ${r.recrawls} (hubs ${r.hubRecrawls}, clocks ${r.clockRecrawls})  new URLs from them ${r.newByRecrawls} = ${perFetch.toFixed(2)} per recrawl fetch  (decisions: ${r.decisions}; ${r.seconds.toFixed(1)} s)`,
    );
  }
  const [adaptive, hubs] = rows.map((r) => r.newByRecrawls / Math.max(1, r.recrawls));
  console.log(`hubs / adaptive, new URLs per recrawl fetch: ${adaptive > 0 ? `${(hubs / adaptive).toFixed(1)}×` : '∞ (adaptive found none)'}`);
}

void main().catch((error) => {
  console.error(error);
  process.exit(1);
});
