import type { Redis } from 'ioredis';
import { BloomHasher, shardedBloomParameters } from '@crawler/bloom';
import type { TestWeb } from '../web/test-web';

/**
 * A reachable URL the crawl never requested, with what the crawl knew of it and of what leads to it, read
 * from the control plane before the services stop: enough for a long run that loses a URL to say where.
 */
export interface LostUrl {
  url: string;
  /** GET /urls: `unknown` for a URL never fetched; its host's frontier state (queued, in flight, fetched). */
  state: string;
  host: { queued: number; inFlight: number; fetched: number } | null;
  /** What leads to it in the test web (see ExpectedCrawl.via): requests it had, what the crawl recorded of it. */
  via: { url: string; requested: number; state: string }[];
  /** Whether URL-seen's Bloom filter has its bits set (read, not set); null when the filter is not one bitmap. */
  markedSeen: boolean | null;
  /** Where it was lost, judged from the above. */
  verdict: string;
}

/** Lost URLs explained at most: beyond, they are only counted. */
const EXPLAINED = 20;

/** URL-seen's Bloom filter as the soak configured it: where its bitmap is, and its size. */
export interface SeenFilter {
  redis: Redis;
  /** `<CRAWLER_PREFIX>:url-seen:bloom`. */
  key: string;
  expectedUrls: number;
  falsePositiveRate: number;
}

/**
 * The never-requested reachable URLs (up to EXPLAINED), each explained. `control`: the control plane's base
 * URL; `seen`: URL-seen's filter, read to tell a URL marked seen and never queued from one that never got there.
 */
export async function explainLost(web: TestWeb, control: string, seen: SeenFilter): Promise<LostUrl[]> {
  const counts = web.requestCountByUrl();
  const lost = [...web.expected.reachable].filter((url) => !counts.has(url)).slice(0, EXPLAINED);
  return Promise.all(
    lost.map(async (url): Promise<LostUrl> => {
      const [found, markedSeen] = await Promise.all([lookUp(control, url), isMarkedSeen(seen, url)]);
      const via = await Promise.all(
        (web.expected.via.get(url) ?? []).map(async (from) => {
          if (!/^https?:/.test(from)) return { url: from, requested: 1, state: 'source' };
          return { url: from, requested: counts.get(from) ?? 0, state: (await lookUp(control, from)).state };
        }),
      );
      // Handled without a record of content-seen's: a sitemap (parsed, not stored) and a redirect (its target sent on).
      const handledUnrecorded = (from: string) => web.expected.sitemaps.has(from) || (web.replyStatus(from) >= 300 && web.replyStatus(from) < 400);
      return { url, state: found.state, host: found.host, via, markedSeen, verdict: verdictOf(found, via, markedSeen, handledUnrecorded) };
    }),
  );
}

type Found = { state: string; host: LostUrl['host'] };

/** Reads the URL's k bits (url-seen's BloomHasher, seed 0), setting none. */
async function isMarkedSeen(seen: SeenFilter, url: string): Promise<boolean | null> {
  const params = shardedBloomParameters(seen.expectedUrls, seen.falsePositiveRate);
  // Sharded, or no filter under that key (URL_SEEN_MODE=exact): not read.
  if (params.shards !== 1 || !(await seen.redis.exists(seen.key))) return null;
  const pipeline = seen.redis.pipeline();
  for (const offset of new BloomHasher(params).offsets(url)) pipeline.getbit(seen.key, offset);
  const bits = (await pipeline.exec()) ?? [];
  return bits.every(([error, bit]) => !error && bit === 1);
}

async function lookUp(control: string, url: string): Promise<Found> {
  try {
    const body = (await (await fetch(`${control}/urls?url=${encodeURIComponent(url)}`)).json()) as {
      state?: string;
      duplicateOf?: { original?: string };
      host?: LostUrl['host'];
    };
    const state = body.state === 'duplicate' ? `duplicate of ${body.duplicateOf?.original}` : (body.state ?? 'unreadable');
    return { state, host: body.host ? { queued: body.host.queued, inFlight: body.host.inFlight, fetched: body.host.fetched } : null };
  } catch (error) {
    return { state: `unreadable (${(error as Error).message})`, host: null };
  }
}

function verdictOf(found: Found, via: LostUrl['via'], markedSeen: boolean | null, handledUnrecorded: (url: string) => boolean): string {
  if (found.host && (found.host.queued > 0 || found.host.inFlight > 0)) {
    return `still in the frontier when the crawl was called complete (its host: ${found.host.queued} queued, ${found.host.inFlight} in flight)`;
  }
  const requested = via.filter((v) => v.requested > 0);
  if (requested.length === 0) return 'nothing leading to it was requested: lost with what leads to it';
  const stored = requested.filter((v) => v.state === 'stored' || v.state === 'source' || handledUnrecorded(v.url));
  if (stored.length) {
    const handled = `${stored.map((v) => v.url).join(', ')} fetched and handled`;
    if (markedSeen === true)
      return `${handled}; URL-seen marked it seen, yet it never reached the frontier: a seen-urls batch lost after its marking, or a Bloom false positive`;
    if (markedSeen === false) return `${handled}, yet URL-seen never marked it: lost on the way there (extract-links, filter-urls)`;
    return `${handled}, yet it never reached the frontier (extract-links, filter-urls, seen-urls, frontier-add)`;
  }
  const duplicates = requested.filter((v) => v.state.startsWith('duplicate'));
  if (duplicates.length === requested.length)
    return `what leads to it was taken for a duplicate (${duplicates.map((v) => `${v.url}: ${v.state}`).join('; ')}): its links not followed`;
  return `${requested.map((v) => v.url).join(', ')} requested but never recorded by content-seen: its page lost between the downloader and content-seen (staging, parse), or its answer not a page`;
}
