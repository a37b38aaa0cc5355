import { Agent, request } from 'undici';
import type { BenchWebProcess } from './bench-web-process';
import { hostsLookup } from './hosts-lookup';

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
  const dispatcher = new Agent({ connections: 4, connect: { lookup: hostsLookup(Object.fromEntries(web.hosts.map((h) => [h.name, h.ip]))) } });
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
