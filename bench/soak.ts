/**
 * Soak: a long crawl of the test web in the distributed shape (every service its own process, BullMQ on
 * Redis, an S3 server), watching for what only shows over time: process memory that keeps growing, Redis
 * memory per page over the documented budget, a queue that grows without bound, politeness that slips.
 * Samples every process's RSS, the Redis memory of the run's prefix and every queue's depth at 10%, 50% and
 * 100% of the expected pages, checks Redis against REDIS_BUDGET_PER_PAGE (80 B), then writes bench/results/soak.json and soak.md and exits 1 if a check fails.
 *
 * Usage: npm run bench:soak   (never part of npm test; about 20 minutes on 2 cores at the defaults: the test
 *   web's hosts share one address, so FRONTIER_PER_IP_LIMIT (8) requests are in flight at most)
 *   SOAK_HOSTS (1000), SOAK_PAGES_PER_HOST (100), SOAK_DELAY_MS (0: the politeness delay; one request per host
 *   at a time always holds), SOAK_CRAWL_DELAY_HOSTS (3, each takes ≥ SOAK_PAGES_PER_HOST seconds),
 *   SOAK_TIMEOUT_MS (3 h), REDIS_URL (redis://127.0.0.1:6379), SOAK_RECORDS (postgres when POSTGRES_URL is set
 *   or a server answers at postgres://postgres@127.0.0.1:5432/test, else redis: where the per-page records
 *   live; on postgres a database is created for the run and dropped after). The Bloom filter is sized for the
 *   run's URLs (URL_SEEN_EXPECTED_URLS), so its bytes count as a crawl of this size would pay them.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runSoak, soakFailures, soakMarkdown } from '../test/support/soak';

const HOSTS = Number(process.env.SOAK_HOSTS || 1000);
const PAGES = Number(process.env.SOAK_PAGES_PER_HOST || 100);
const DELAY_MS = Number(process.env.SOAK_DELAY_MS || 0);
const CRAWL_DELAY_HOSTS = Number(process.env.SOAK_CRAWL_DELAY_HOSTS ?? 3);
const TIMEOUT_MS = Number(process.env.SOAK_TIMEOUT_MS || 3 * 3_600_000);
/** Where the results go: bench/results in the source tree (this file runs from dist/bench). */
const RESULTS = join(__dirname, '../../bench/results');

async function main() {
  const result = await runSoak({
    hosts: HOSTS,
    pagesPerHost: PAGES,
    delayMs: DELAY_MS,
    crawlDelayHosts: CRAWL_DELAY_HOSTS,
    timeoutMs: TIMEOUT_MS,
    log: (line) => console.log(line),
  });
  const failures = soakFailures(result);
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(join(RESULTS, 'soak.json'), `${JSON.stringify({ ...result, failures }, null, 2)}\n`);
  const md = `${soakMarkdown(result)}\n## Checks\n\n${failures.length ? failures.map((f) => `- FAILED: ${f}`).join('\n') : 'All passed.'}\n`;
  writeFileSync(join(RESULTS, 'soak.md'), md);
  console.log(`\n${md}`);
  process.exitCode = failures.length ? 1 : 0;
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
