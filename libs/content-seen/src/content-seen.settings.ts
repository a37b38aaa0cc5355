import { z } from 'zod';
import { int } from '@crawler/settings';

/** `config.contentSeen` (assembled by @crawler/config). */
export const contentSeenSettings = z.object({
  /**
   * Pages whose 64-bit simhashes differ in at most this many bits are near duplicates; 0 = exact duplicates only.
   * @defaultValue 3
   */
  nearDuplicateDistance: int(0).max(7).default(3).meta({ env: 'CONTENT_SEEN_NEAR_DUPLICATE_DISTANCE' }),
  /**
   * Pages checked (and stored) at once per process. High, because a page waits for its segment to be written
   * (`PAGES_SEGMENT_LINGER_MS`): pages in flight = throughput × that wait.
   * @defaultValue 256
   */
  concurrency: int(1).default(256).meta({ env: 'CONTENT_SEEN_CONCURRENCY' }),
});
