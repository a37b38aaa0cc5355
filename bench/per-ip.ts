/**
 * Per-IP pacing where many sites share an address: the benchmark web with most of its hosts (distinct registrable
 * domains) mapped to a couple of addresses, as a CDN serves its sites, and the rest on addresses of their own.
 * Crawled embedded three times: the per-IP rule held to its base (FRONTIER_PER_IP_MAX_SCALE=1: 8 in flight and
 * 100 ms apart per address, however many sites it serves), grown with the domains on each address (the
 * defaults), and lifted on the shared addresses (named in FRONTIER_PER_IP_CDN_CIDRS); prints each run's pages/s. The web server answers any of its names on any of its
 * addresses, so only the hosts file changes.
 *
 * Usage: npm run bench:per-ip
 *   PER_IP_SHARED_HOSTS (2000) on PER_IP_SHARED_ADDRESSES (2), PER_IP_OWN_HOSTS (200) on one address each,
 *   PER_IP_PAGES_PER_HOST (5), PER_IP_PAGES (3000: --max-pages), PER_IP_DELAY_MS (500: the per-host delay),
 *   PER_IP_LATENCY_MS (10: the server's think time per answer).
 */
import { runEmbedded } from './crawl/run-embedded';
import { BenchWebProcess } from './web/bench-web-process';

const env = (name: string, fallback: number) => Number(process.env[name] || fallback);
const SHARED_HOSTS = env('PER_IP_SHARED_HOSTS', 2000);
const SHARED_ADDRESSES = env('PER_IP_SHARED_ADDRESSES', 2);
const OWN_HOSTS = env('PER_IP_OWN_HOSTS', 200);
const PAGES_PER_HOST = env('PER_IP_PAGES_PER_HOST', 5);
const PAGES = env('PER_IP_PAGES', 3000);
const DELAY_MS = env('PER_IP_DELAY_MS', 500);
const LATENCY_MS = env('PER_IP_LATENCY_MS', 10);

async function main() {
  const web = await BenchWebProcess.start({ hosts: SHARED_HOSTS + OWN_HOSTS, pagesPerHost: PAGES_PER_HOST, seed: 1, latencyMs: LATENCY_MS, shape: 'real', pageKb: 15 });
  try {
    const shared = web.hosts.slice(0, SHARED_ADDRESSES).map((h) => h.ip);
    const hostsFile = `${web.hosts.map((h, i) => `${i < SHARED_HOSTS ? shared[i % SHARED_ADDRESSES] : h.ip} ${h.name}`).join('\n')}\n`;
    console.log(`web: ${SHARED_HOSTS} hosts on ${SHARED_ADDRESSES} addresses (${shared.join(', ')}), ${OWN_HOSTS} on their own; ${PAGES_PER_HOST} pages each`);
    const rules: [string, Record<string, string>][] = [
      ['base per-IP rule (FRONTIER_PER_IP_MAX_SCALE=1)', { FRONTIER_PER_IP_MAX_SCALE: '1' }],
      ['grown with the domains on each address (defaults)', {}],
      ['the shared addresses named CDN edges (FRONTIER_PER_IP_CDN_CIDRS)', { FRONTIER_PER_IP_CDN_CIDRS: shared.map((ip) => `${ip}/32`).join(',') }],
    ];
    for (const [label, ruleEnv] of rules) {
      const run = await runEmbedded(web, {
        id: 'per-ip',
        label,
        pages: PAGES,
        delayMs: DELAY_MS,
        hostsFile,
        env: { FRONTIER_PER_IP_INTERVAL_MS: '100', ...ruleEnv },
      });
      const { pages, seconds, pagesPerSecond, complete, web: seen } = run;
      console.log(
        `${label}: ${pages} pages in ${seconds.toFixed(1)} s = ${pagesPerSecond.toFixed(1)} pages/s; ${seen.requests} requests, ${seen.hostsVisited} hosts${complete ? '' : ' (incomplete)'}`,
      );
    }
  } finally {
    await web.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
