/** The plugin's validated settings (also on PluginContext.config). */
export const PLUGIN_CONFIG = Symbol('PLUGIN_CONFIG');
/** The plugin's manifest, as registered. */
export const PLUGIN_MANIFEST = Symbol('PLUGIN_MANIFEST');
/** The instance of the plugin's handler class. */
export const PLUGIN_HANDLER = Symbol('PLUGIN_HANDLER');
/** Jobs of the plugin's queue handled at once. */
export const PLUGIN_CONCURRENCY = Symbol('PLUGIN_CONCURRENCY');
