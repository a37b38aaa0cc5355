import { z } from 'zod';
import { int } from '@crawler/settings';

/** `config.parser` (assembled by @crawler/config). */
export const contentParserSettings = z.object({
  /** Links kept per page. @defaultValue 5000 */
  maxLinks: int(1).default(5000).meta({ env: 'PARSER_MAX_LINKS' }),
  /**
   * Pages parsed at once per process (parsing is CPU work: more only hides the waits for staged bodies).
   * @defaultValue 32
   */
  concurrency: int(1).default(32).meta({ env: 'PARSER_CONCURRENCY' }),
  /**
   * Worker threads parsing beside the event loop; 0 = parse on it. The embedded `crawl` uses one per spare core
   * unless set; a service scales by replicas instead.
   * @defaultValue 0
   */
  threads: int(0).max(64).default(0).meta({ env: 'PARSER_THREADS' }),
});
