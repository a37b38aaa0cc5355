import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { z } from 'zod';
import { pluginConfig } from '@crawler/plugin-sdk';

const int = (min: number) => z.coerce.number().int().min(min);
const list = z.string().transform((s) =>
  s
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean),
);
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
    /**
     * The Chromium executable. None found, or not executable: the service stops at boot naming this variable (exit
     * code 2).
     * @defaultValue the first of `chromium`, `chromium-browser`, `google-chrome`, `google-chrome-stable` on `PATH`
     */
    chromiumPath: z.string().optional().meta({ env: 'PLUGIN_RENDER_CHROMIUM_PATH' }),
    /**
     * Path globs of pages always rendered, comma-separated (`/app/**,/search`; `*` within a segment, `**` across).
     * @defaultValue no patterns
     */
    urlPatterns: list
      .pipe(z.array(z.string().regex(/^\/\S{0,255}$/, 'a path glob starting with /')).max(64))
      .default([])
      .meta({ env: 'PLUGIN_RENDER_URL_PATTERNS' }),
    /**
     * Render the pages whose fetched HTML looks script-built (no `<a href>`, a script, and an empty app root such as
     * `<div id="root"></div>` or a body of scripts only): what enabling the plugin is for, so on unless turned off.
     * Every HTML page then passes through the plugin's queue (the others go on as fetched). `false`: only the pages
     * of `PLUGIN_RENDER_URL_PATTERNS` are rendered, and the others never leave the downloader's path.
     * @defaultValue true
     */
    detect: bool.default(true).meta({ env: 'PLUGIN_RENDER_DETECT' }),
    /**
     * A render (load, scripts, sub-requests, reading the DOM) is cut after this long: the page is closed (which kills
     * a script that never ends) and goes on to the parser as fetched.
     * @defaultValue 15000
     */
    timeoutMs: int(100).max(600_000).default(15_000).meta({ env: 'PLUGIN_RENDER_TIMEOUT_MS' }),
    /**
     * After the load event, how long the page may keep fetching (until the network is idle) before its DOM is read.
     * @defaultValue 2000
     */
    settleMs: int(0).max(60_000).default(2_000).meta({ env: 'PLUGIN_RENDER_SETTLE_MS' }),
    /**
     * JavaScript heap limit of each page's renderer (`--js-flags=--max-old-space-size`): a page above it crashes, and
     * is handled as a crash.
     * @defaultValue 256
     */
    maxHeapMb: int(16).max(16_384).default(256).meta({ env: 'PLUGIN_RENDER_MAX_HEAP_MB' }),
    /**
     * Browser contexts (pages rendered at once) per process: the pool size and the queue's concurrency.
     * @defaultValue 2
     */
    contexts: int(1).max(64).default(2).meta({ env: 'PLUGIN_RENDER_CONTEXTS' }),
    /**
     * Request kinds refused inside the browser (Playwright resource types, comma-separated).
     * @defaultValue image,font,media
     */
    blockTypes: list.default(['image', 'font', 'media']).meta({ env: 'PLUGIN_RENDER_BLOCK_TYPES' }),
    /** Sub-requests one page may make; the rest are refused. @defaultValue 100 */
    maxSubrequests: int(0).max(10_000).default(100).meta({ env: 'PLUGIN_RENDER_MAX_SUBREQUESTS' }),
    /**
     * Times a page whose render crashed (the browser died, or the page's renderer) is retried through the queue
     * before it goes on to the parser as fetched.
     * @defaultValue 2
     */
    crashRetries: int(0).max(20).default(2).meta({ env: 'PLUGIN_RENDER_CRASH_RETRIES' }),
  })
  .transform((config, ctx) => {
    const chromiumPath = config.chromiumPath ?? findOnPath(CHROMIUM_NAMES);
    if (!chromiumPath) {
      ctx.addIssue({
        code: 'custom',
        path: ['chromiumPath'],
        message: `no Chromium found: none of ${CHROMIUM_NAMES.join(', ')} is on PATH; install Chromium or set the path`,
      });
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

export const RENDER_CONFIG = pluginConfig(RenderConfigSchema);
