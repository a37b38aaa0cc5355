import { z } from 'zod';
import { int } from '@crawler/settings';

/** `config.seen` (assembled by @crawler/config). */
export const urlSeenSettings = z.object({
  /** URL batches checked at once per process. @defaultValue 64 */
  concurrency: int(1).default(64).meta({ env: 'URL_SEEN_CONCURRENCY' }),
  /**
   * URL-seen structure: a Bloom filter (fixed memory, rare false positives) or exact 64-bit fingerprints.
   * @defaultValue 'bloom'
   */
  mode: z.enum(['bloom', 'exact']).default('bloom').meta({ env: 'URL_SEEN_MODE' }),
  /**
   * URL-seen is sized for this many URLs (Bloom: its bits, in shards of at most 2³² bits, at least 16 on a Redis
   * Cluster, all taken in Redis by the first URLs: a crawl refuses to start on a Redis whose `maxmemory` has no
   * room for them; exact: its number of fingerprint sets).
   * @defaultValue 10000000
   */
  expectedUrls: int(1).default(10_000_000).meta({ env: 'URL_SEEN_EXPECTED_URLS' }),
  /** …at this false-positive rate. @defaultValue 0.001 */
  falsePositiveRate: z.coerce.number().gt(0).lt(0.5).default(0.001).meta({ env: 'URL_SEEN_FALSE_POSITIVE_RATE' }),
  /**
   * How long a batch's answer (which of its URLs were new) is kept while its URLs are not yet handed to the
   * frontier. A message that failed on its way there waits in the failed set for an operator's replay, which
   * must still find the answer: its URLs are marked seen, and only the answer says they were new. Dropped as
   * soon as the URLs are sent, so Redis holds the answers of the batches in flight or failed, not of every
   * batch. Must be longer than `QUEUE_INFRA_OUTAGE_MAX_MS` (boot refuses it otherwise). 7 days by default.
   * @defaultValue 604800000
   */
  answerMemoryMs: int(60_000).default(604_800_000).meta({ env: 'URL_SEEN_ANSWER_MEMORY_MS' }),
});
