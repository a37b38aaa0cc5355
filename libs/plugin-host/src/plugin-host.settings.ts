import { z } from 'zod';
import { int } from '@crawler/settings';

/** `config.plugins`: which plugins the crawl runs, and how long a service waits for one (assembled by @crawler/config). */
export const pluginsSettings = z.object({
  /**
   * Plugins enabled, comma-separated names (`png`, `monitor`, `render`, `focus`): each is `libs/plugin-<name>`,
   * loaded by the embedded crawl or run as the service `plugin-<name>`. Empty = none: the crawl is exactly the
   * core's. Give every service the same list.
   * @defaultValue []
   */
  enabled: z
    .array(z.string().regex(/^[a-z][a-z0-9-]{0,31}$/, 'is not a plugin name (lower-case letters, digits, -)'))
    .max(32)
    .refine((names) => new Set(names).size === names.length, 'names a plugin twice')
    .default([])
    .meta({ env: 'PLUGINS', read: 'list' }),
  /**
   * How long a service waits for an enabled plugin to register its manifest before failing the job that needs it
   * (the job is retried).
   * @defaultValue 60000
   */
  waitMs: int(0).default(60_000).meta({ env: 'PLUGINS_WAIT_MS' }),
});
