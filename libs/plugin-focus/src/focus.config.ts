import { z } from 'zod';
import { pluginConfig } from '@crawler/plugin-sdk';

/** `a, b ,c` → `['a', 'b', 'c']`, empty items dropped. */
const terms = z
  .string()
  .transform((value) =>
    value
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean),
  )
  .pipe(z.array(z.string().max(200, 'each term at most 200 characters')));

const fraction = z.coerce.number().min(0).max(1);

/** The focused crawl's settings (documented in docs/configuration.md, "Plugin settings"). */
export const FocusConfigSchema = z.object({
  /**
   * The topic: words or phrases, comma-separated, matched case-insensitively and as whole words. Required once
   * `PLUGINS` names focus: the frontier refuses to start without it (the service itself idles without).
   * @defaultValue no terms
   */
  terms: terms.default([]).meta({ env: 'PLUGIN_FOCUS_TERMS' }),
  /**
   * A page is relevant when at least this share of the terms occurs in its title or visible text (0 to 1, above 0).
   * @defaultValue 0.5
   */
  threshold: fraction
    .refine((v) => v > 0, 'must be above 0')
    .default(0.5)
    .meta({ env: 'PLUGIN_FOCUS_THRESHOLD' }),
  /** The share of links given a random front queue instead of the learned one (exploration). @defaultValue 0.1 */
  epsilon: fraction.default(0.1).meta({ env: 'PLUGIN_FOCUS_EPSILON' }),
  /** The expected yield (0 to 1) of a link from a place the learner knows nothing about. @defaultValue 0.3 */
  prior: fraction.default(0.3).meta({ env: 'PLUGIN_FOCUS_PRIOR' }),
  /**
   * Places (hosts and host + first path segment) the learner keeps, hosts met only as a link's target included. Past
   * it, new places are not learned: their links keep the prior, counted as `plugin.focus.learner-full` and logged.
   * @defaultValue 100000
   */
  maxPlaces: z.coerce.number().int().min(1).max(10_000_000).default(100_000).meta({ env: 'PLUGIN_FOCUS_MAX_PLACES' }),
  /**
   * How long the frontier waits for a link's page to be judged before scoring the link without it (the page and
   * its links go out together; the links usually arrive first). @defaultValue 1000
   */
  judgeWaitMs: z.coerce.number().int().min(0).max(60_000).default(1000).meta({ env: 'PLUGIN_FOCUS_JUDGE_WAIT_MS' }),
  /** How long the frontier reuses the counts of a place it read before reading them again. @defaultValue 250 */
  cacheMs: z.coerce.number().int().min(0).max(600_000).default(250).meta({ env: 'PLUGIN_FOCUS_CACHE_MS' }),
});
export type FocusConfig = z.infer<typeof FocusConfigSchema>;

export const FOCUS_CONFIG = pluginConfig(FocusConfigSchema);
