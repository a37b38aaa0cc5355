/**
 * The peer: Crawlee's CheerioCrawler crawling the benchmark web from the same seeds, with its default
 * options (autoscaled concurrency, retries, sessions, its in-memory request queue persisted to a storage
 * directory), every `<a href>` enqueued (`strategy: 'all'`: the web's links cross hosts, as ours follow
 * them), and the crawl cut at `maxRequests` (maxRequestsPerCrawl). `sameDomainDelaySecs` turns on its
 * politeness option, which spaces requests to one registrable domain.
 *
 * Names resolve through the benchmark's hosts map (dns.lookup is answered from it; nothing leaves the
 * machine). argv[2]: a JSON file { seeds, hosts: { name: ip }, maxRequests, sameDomainDelaySecs?, storageDir }.
 * Prints JSON { handled, failed } when done.
 */
import dns from 'node:dns';
import { readFileSync } from 'node:fs';

interface PeerJob {
  seeds: string[];
  hosts: Record<string, string>;
  maxRequests: number;
  sameDomainDelaySecs?: number;
  storageDir: string;
}

const job = JSON.parse(readFileSync(process.argv[2], 'utf8')) as PeerJob;
process.env.CRAWLEE_STORAGE_DIR = job.storageDir;
process.env.CRAWLEE_LOG_LEVEL ??= 'WARNING';

// Before any HTTP client is loaded: the benchmark's names answer from its map, as a hosts file would.
const systemLookup = dns.lookup;
(dns as { lookup: unknown }).lookup = (hostname: string, options: unknown, callback?: unknown) => {
  const cb = (typeof options === 'function' ? options : callback) as (...args: unknown[]) => void;
  const opts = (typeof options === 'object' && options !== null ? options : {}) as { all?: boolean };
  const ip = job.hosts[hostname];
  if (!ip) return (systemLookup as (...args: unknown[]) => void)(hostname, options, callback);
  process.nextTick(() => (opts.all ? cb(null, [{ address: ip, family: 4 }]) : cb(null, ip, 4)));
};

async function main() {
  // Loaded after the lookup is in place.
  const { CheerioCrawler } = await import('@crawlee/cheerio');
  let handled = 0;
  const crawler = new CheerioCrawler({
    maxRequestsPerCrawl: job.maxRequests,
    ...(job.sameDomainDelaySecs ? { sameDomainDelaySecs: job.sameDomainDelaySecs } : {}),
    async requestHandler({ enqueueLinks }) {
      handled++;
      await enqueueLinks({ strategy: 'all' });
    },
  });
  const stats = await crawler.run(job.seeds);
  process.stdout.write(`${JSON.stringify({ handled, finished: stats.requestsFinished, failed: stats.requestsFailed })}\n`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
