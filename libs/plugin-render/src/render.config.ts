import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { z } from 'zod';
import type { PluginConfigSpec } from '@crawler/plugin-sdk';

const int = (min: number) => z.coerce.number().int().min(min);
const list = z.string().transform((s) => s.split(',').map((p) => p.trim()).filter(Boolean));
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/** Names a system Chromium goes by, looked up on PATH when PLUGIN_RENDER_CHROMIUM_PATH is not set. */
export const CHROMIUM_NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

/** The first executable of `names` on `path` (a PATH value), if any. */
export function findOnPath(names: readonly string[], path = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter).filter(Boolean)) {
    for (const name of names) {
      const file = join(dir, name);
      try {
        accessSync(file, constants.X_OK);
        return file;
      } catch {
        // not there: the next one
      }
    }
  }
  return undefined;
}

/** The render plugin's settings (documented in docs/configuration.md, "Plugin settings"). */
export const RenderConfigSchema = z
  .object({
    /** The Chromium to run. @defaultValue the first of chromium, chromium-browser, google-chrome on PATH */
    chromiumPath: z.string().optional(),
    /** Path globs of pages always rendered (`/app/**`, `/*`; as the plugins' `urlPatterns`). @defaultValue none */
    urlPatterns: list.pipe(z.array(z.string().regex(/^\/\S{0,255}$/, 'a path glob starting with /')).max(64)).default([]),
    /**
     * Also render pages whose fetched HTML looks built by scripts (an empty app root, script bundles, no
     * links). Every HTML page then passes through the plugin's queue. @defaultValue false
     */
    detect: bool.default(false),
    /** A render (navigation, scripts, sub-requests, the DOM read back) is cut after this long. @defaultValue 15000 */
    timeoutMs: int(100).max(600_000).default(15_000),
    /** After the load event, how long the page may keep fetching (network idle) before its DOM is read. @defaultValue 2000 */
    settleMs: int(0).max(60_000).default(2_000),
    /** V8 heap limit of each page's renderer (`--js-flags=--max-old-space-size`); above it the page crashes. @defaultValue 256 */
    maxHeapMb: int(16).max(16_384).default(256),
    /** Browser contexts (pages rendered at once) per process: the pool size, and the queue's concurrency. @defaultValue 2 */
    contexts: int(1).max(64).default(2),
    /** Request kinds refused inside the browser (Playwright resource types). @defaultValue image,font,media */
    blockTypes: list.default(['image', 'font', 'media']),
    /** Sub-requests one page may make; the rest are refused. @defaultValue 100 */
    maxSubrequests: int(0).max(10_000).default(100),
    /** Times a page whose render crashed Chromium is retried before it goes to the parser as fetched. @defaultValue 2 */
    crashRetries: int(0).max(20).default(2),
  })
  .transform((config, ctx) => {
    const chromiumPath = config.chromiumPath ?? findOnPath(CHROMIUM_NAMES);
    if (!chromiumPath) {
      ctx.addIssue({ code: 'custom', path: ['chromiumPath'], message: `no Chromium found: none of ${CHROMIUM_NAMES.join(', ')} is on PATH; install Chromium or set the path` });
      return z.NEVER;
    }
    try {
      accessSync(chromiumPath, constants.X_OK);
    } catch {
      ctx.addIssue({ code: 'custom', path: ['chromiumPath'], message: `${chromiumPath} is not an executable file: install Chromium or set the path` });
      return z.NEVER;
    }
    return { ...config, chromiumPath };
  });
export type RenderConfig = z.output<typeof RenderConfigSchema>;

export const RENDER_CONFIG: PluginConfigSpec<RenderConfig> = {
  schema: RenderConfigSchema as unknown as z.ZodType<RenderConfig>,
  env: {
    PLUGIN_RENDER_CHROMIUM_PATH: 'chromiumPath',
    PLUGIN_RENDER_URL_PATTERNS: 'urlPatterns',
    PLUGIN_RENDER_DETECT: 'detect',
    PLUGIN_RENDER_TIMEOUT_MS: 'timeoutMs',
    PLUGIN_RENDER_SETTLE_MS: 'settleMs',
    PLUGIN_RENDER_MAX_HEAP_MB: 'maxHeapMb',
    PLUGIN_RENDER_CONTEXTS: 'contexts',
    PLUGIN_RENDER_BLOCK_TYPES: 'blockTypes',
    PLUGIN_RENDER_MAX_SUBREQUESTS: 'maxSubrequests',
    PLUGIN_RENDER_CRASH_RETRIES: 'crashRetries',
  },
};
