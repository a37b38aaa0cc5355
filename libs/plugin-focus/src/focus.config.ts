import { z } from 'zod';
import type { PluginConfigSpec } from '@crawler/plugin-sdk';

/** `a, b ,c` → `['a', 'b', 'c']`, empty items dropped. */
const terms = z
  .string()
  .transform((value) => value.split(',').map((t) => t.trim()).filter(Boolean))
  .pipe(z.array(z.string().max(200, 'each term at most 200 characters')));

const fraction = z.coerce.number().min(0).max(1);

/** The focused crawl's settings (documented in docs/configuration.md, "Plugin settings"). */
export const FocusConfigSchema = z.object({
  /**
   * The topic: words or phrases, comma-separated; case-insensitive, whole words only. Required once PLUGINS
   * names focus (checked when the frontier loads the prioritizer); may be empty while the service idles. @defaultValue []
   */
  terms: terms.default([]),
  /** A page is relevant when at least this fraction of the terms occur in its title or text. @defaultValue 0.5 */
  threshold: fraction.refine((v) => v > 0, 'must be above 0').default(0.5),
  /** The share of links given a random front queue instead of the learned one (explore vs exploit). @defaultValue 0.1 */
  epsilon: fraction.default(0.1),
  /** What a link from a place the learner knows nothing of is expected to yield (0…1). @defaultValue 0.3 */
  prior: fraction.default(0.3),
  /** Places (hosts and path prefixes) the learner keeps; past it, new places are not learned. @defaultValue 100000 */
  maxPlaces: z.coerce.number().int().min(1).max(10_000_000).default(100_000),
  /** How long the frontier keeps what it read of a place before reading it again. @defaultValue 250 */
  cacheMs: z.coerce.number().int().min(0).max(600_000).default(250),
});
export type FocusConfig = z.infer<typeof FocusConfigSchema>;

export const FOCUS_CONFIG: PluginConfigSpec<FocusConfig> = {
  schema: FocusConfigSchema as unknown as z.ZodType<FocusConfig>,
  env: {
    PLUGIN_FOCUS_TERMS: 'terms',
    PLUGIN_FOCUS_THRESHOLD: 'threshold',
    PLUGIN_FOCUS_EPSILON: 'epsilon',
    PLUGIN_FOCUS_PRIOR: 'prior',
    PLUGIN_FOCUS_MAX_PLACES: 'maxPlaces',
    PLUGIN_FOCUS_CACHE_MS: 'cacheMs',
  },
};
