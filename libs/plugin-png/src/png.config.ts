import { z } from 'zod';
import { pluginConfig } from '@crawler/plugin-sdk';

const int = (min: number) => z.coerce.number().int().min(min);

/** The PNG plugin's settings (documented in docs/configuration.md, "Plugin settings"). */
export const PngConfigSchema = z.object({
  /**
   * A PNG is read up to this many bytes (the downloader's limit for `image/png`); a longer one is rejected as
   * `too-large`.
   * @defaultValue 5242880
   */
  maxBytes: int(1024)
    .max(1024 * 1024 * 1024)
    .default(5 * 1024 * 1024)
    .meta({ env: 'PLUGIN_PNG_MAX_BYTES' }),
  /** A PNG of more pixels (width × height) is rejected as `too-many-pixels`. @defaultValue 100000000 */
  maxPixels: int(1).default(100_000_000).meta({ env: 'PLUGIN_PNG_MAX_PIXELS' }),
  /** PNGs checked and stored at once per process. @defaultValue 4 */
  concurrency: int(1).max(256).default(4).meta({ env: 'PLUGIN_PNG_CONCURRENCY' }),
});
export type PngConfig = z.infer<typeof PngConfigSchema>;

export const PNG_CONFIG = pluginConfig(PngConfigSchema);
