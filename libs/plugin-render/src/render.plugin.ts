import { definePlugin } from '@crawler/plugin-sdk';
import { RENDER_CONFIG, RenderConfig } from './render.config';
import { RenderPluginHandler } from './render.handler';

/**
 * The rendering plugin: with `PLUGINS=render`, the HTML pages it claims (PLUGIN_RENDER_URL_PATTERNS, or
 * every page with PLUGIN_RENDER_DETECT) come here from the downloader instead of going to the parser; the
 * script-built ones are rendered in headless Chromium and their DOM goes on to the parser as the page.
 */
export const renderPlugin = definePlugin<RenderConfig>({
  name: 'render',
  claims: (config) => ({ pages: config.detect ? ['/**'] : config.urlPatterns }),
  config: RENDER_CONFIG,
  handler: RenderPluginHandler,
  concurrency: (config) => config.contexts,
});
