/**
 * Crawls the local test web in both shapes and prints pages, seconds, pages/s, CPU ms per page and peak
 * RSS: the embedded CLI (one process, memory queues, filesystem store) and the distributed services (one
 * process each, BullMQ on Redis, an S3-compatible server). robots.txt is obeyed and one request at a time
 * goes to each host; the politeness delay is BENCH_DELAY_MS (default 0) so the machine, not the clock, is
 * measured. Usage: npm run bench  (REDIS_URL defaults to redis://127.0.0.1:6379)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROBOTS_ERROR_TTL_MS, TestWebCluster } from '../test/support/test-web-cluster';
import { TestWeb } from '../test/web/test-web';
import { ProcessSampler } from './process-sampler';

const HOSTS = Number(process.env.BENCH_HOSTS || 200);
const PAGES = Number(process.env.BENCH_PAGES_PER_HOST || 5);
const DELAY_MS = Number(process.env.BENCH_DELAY_MS || 0);

interface Result {
  shape: string;
  pages: number;
  seconds: number;
  cpuMs: number;
  peakRssBytes: number;
  complete: boolean;
}

async function embedded(web: TestWeb, hostsFile: string): Promise<Result> {
  const out = mkdtempSync(join(tmpdir(), 'bench-embedded-'));
  const args = [join(__dirname, '../apps/crawl/src/main.js'), ...web.seeds(), '--scope', 'any', '--max-depth', '1000000',
    '--delay', String(DELAY_MS / 1000), '--hosts-file', hostsFile, '--allow-private', '--out', out, '--json'];
  const started = performance.now();
  const child = spawn(process.execPath, args, { env: { ...process.env, REDIS_URL: '', S3_URL: '', DOWNLOADER_ROBOTS_ERROR_TTL_MS: ROBOTS_ERROR_TTL_MS }, stdio: ['ignore', 'pipe', 'inherit'] });
  const sampler = new ProcessSampler(() => [child.pid!]);
  let stdout = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  await new Promise((resolve) => child.once('exit', resolve));
  const seconds = (performance.now() - started) / 1000;
  const usage = sampler.stop();
  const summary = JSON.parse(stdout);
  return { shape: 'embedded (1 process)', pages: summary.pagesFetched, seconds, cpuMs: usage.cpuMs, peakRssBytes: usage.peakRssBytes, complete: summary.complete };
}

async function distributed(web: TestWeb): Promise<Result> {
  const cluster = await new TestWebCluster(web).start({ env: { URL_FILTER_MAX_DEPTH: '1000000', FRONTIER_MIN_DELAY_MS: String(DELAY_MS) } });
  const sampler = new ProcessSampler(() => cluster.services.map((s) => s.process.pid!));
  const started = performance.now();
  await cluster.seed(web.seeds());
  const status = await cluster.until((s) => s.complete, 600_000);
  const seconds = (performance.now() - started) / 1000;
  sampler.sample();
  const usage = sampler.stop();
  await cluster.close();
  return { shape: `distributed (${cluster.services.length} processes)`, pages: status.totals.fetched ?? 0, seconds, cpuMs: usage.cpuMs, peakRssBytes: usage.peakRssBytes, complete: status.complete };
}

function row(r: Result) {
  const mb = (r.peakRssBytes / 2 ** 20).toFixed(0);
  return `| ${r.shape} | ${r.pages} | ${r.seconds.toFixed(1)} | ${(r.pages / r.seconds).toFixed(1)} | ${(r.cpuMs / r.pages).toFixed(2)} | ${mb} | ${r.complete ? 'yes' : 'NO'} |`;
}

async function main() {
  const web = await TestWeb.start({ hosts: HOSTS, pagesPerHost: PAGES });
  const hostsFile = join(mkdtempSync(join(tmpdir(), 'bench-')), 'hosts');
  writeFileSync(hostsFile, web.hostsFile());
  const results: Result[] = [];
  web.reset();
  results.push(await embedded(web, hostsFile));
  web.reset();
  results.push(await distributed(web));
  await web.close();
  console.log(`\nTest web: ${HOSTS} hosts × ${PAGES} pages, ${web.expected.reachable.size} reachable URLs; politeness delay ${DELAY_MS} ms, robots.txt obeyed, 1 request per host at a time\n`);
  console.log('| shape | pages | seconds | pages/s | CPU ms/page | peak RSS MiB (sum) | complete |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of results) console.log(row(r));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

