import { z } from 'zod';
import { int } from '@crawler/settings';

/** `config.extractor` (assembled by @crawler/config). */
export const urlExtractorSettings = z.object({
  /** Pages' links resolved at once per process. @defaultValue 32 */
  concurrency: int(1).default(32).meta({ env: 'URL_EXTRACTOR_CONCURRENCY' }),
});
