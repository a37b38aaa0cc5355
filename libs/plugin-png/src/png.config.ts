import { z } from 'zod';
import type { PluginConfigSpec } from '@crawler/plugin-sdk';

const int = (min: number) => z.coerce.number().int().min(min);

/** The PNG plugin's settings (documented in docs/configuration.md, "Plugins"). */
export const PngConfigSchema = z.object({
  /** A PNG is read up to this many bytes; a longer one is rejected as `too-large`. @defaultValue 5242880 */
  maxBytes: int(1024).max(1024 * 1024 * 1024).default(5 * 1024 * 1024),
  /** A PNG of more pixels (width × height) is rejected as `too-many-pixels`. @defaultValue 100000000 */
  maxPixels: int(1).default(100_000_000),
  /** PNGs checked and stored at once per process. @defaultValue 4 */
  concurrency: int(1).max(256).default(4),
});
export type PngConfig = z.infer<typeof PngConfigSchema>;

export const PNG_CONFIG: PluginConfigSpec<PngConfig> = {
  schema: PngConfigSchema,
  env: {
    PLUGIN_PNG_MAX_BYTES: 'maxBytes',
    PLUGIN_PNG_MAX_PIXELS: 'maxPixels',
    PLUGIN_PNG_CONCURRENCY: 'concurrency',
  },
};
