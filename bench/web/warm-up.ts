import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent, request } from 'undici';
import type { BenchWebProcess } from './bench-web-process';

/** Pages fetched before the first run (BENCH_WARM_UP_PAGES). */
export const WARM_UP_PAGES = 4000;
const CONCURRENCY = 32;

/**
 * Fetches pages of the web before any run is timed. One process serves every run, and the first run used to
 * meet it cold (its code not yet optimised by the JIT): the run that came first was slowed by that, and a
 * ratio of two runs favoured the second.
 */
export async function warmUp(web: Pick<BenchWebProcess, 'hosts' | 'pageUrls'>, pages = WARM_UP_PAGES): Promise<void> {
  if (pages <= 0) return;
  const ips = new Map(web.hosts.map((h) => [h.name, h.ip]));
  const dispatcher = new Agent({
    connections: 4,
    connect: {
      lookup: (hostname, options, callback) => {
        const ip = ips.get(hostname);
        if (!ip) return dnsLookup(hostname, options, callback);
        const answer: LookupAddress = { address: ip, family: 4 };
        if ((options as { all?: boolean }).all) (callback as (e: null, a: LookupAddress[]) => void)(null, [answer]);
        else callback(null, ip, 4);
      },
    },
  });
  const urls = web.pageUrls(pages);
  let next = 0;
  const fetchSome = async () => {
    while (next < urls.length) {
      const { body } = await request(urls[next++], { dispatcher, headers: { 'user-agent': 'bench-warm-up' } });
      await body.dump();
    }
  };
  try {
    await Promise.all(Array.from({ length: CONCURRENCY }, fetchSome));
  } finally {
    await dispatcher.close();
  }
}
