import { definePlugin } from '@crawler/plugin-sdk';
import { PNG_CONFIG, PngConfig } from './png.config';
import { PngPluginHandler } from './png.handler';

/**
 * The PNG downloader: with `PLUGINS=png`, `.png` URLs are no longer filtered out, `<img src>` links to them
 * are followed, and `image/png` responses come here instead of being dropped, read up to
 * PLUGIN_PNG_MAX_BYTES, checked, deduplicated and stored as `images/<aa>/<sha256>.png`.
 */
export const pngPlugin = definePlugin<PngConfig>({
  name: 'png',
  claims: (config) => ({ contentTypes: ['image/png'], extensions: ['png'], maxBytes: config.maxBytes }),
  config: PNG_CONFIG,
  handler: PngPluginHandler,
  concurrency: (config) => config.concurrency,
});
