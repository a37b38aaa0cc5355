import { definePlugin } from '@crawler/plugin-sdk';
import { MONITOR_CONFIG, MonitorConfig } from './monitor.config';
import { MonitorPluginHandler } from './monitor.handler';

/**
 * The web monitor: with `PLUGINS=monitor`, every new parsed page is searched for PLUGIN_MONITOR_TERMS and
 * PLUGIN_MONITOR_PATTERNS (a trademark, a product code), and each one found raises an alert, once per page
 * version, with the URL and a snippet: to the queue `plugin-events.monitor`, to a JSONL file and to a webhook.
 */
export const monitorPlugin = definePlugin<MonitorConfig>({
  name: 'monitor',
  pageHook: true,
  config: MONITOR_CONFIG,
  handler: MonitorPluginHandler,
});
