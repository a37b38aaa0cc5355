import { ConfigError } from '@crawler/config';
import { bootstrapService } from '@crawler/runtime';
import { loadPluginConfig } from './plugin-config';
import type { PluginDefinition } from './plugin-definition';
import { pluginModule } from './plugin.module';

/**
 * Starts a plugin as its own service `plugin-<name>` (its app's whole main.ts): the shared runtime
 * (validated configuration, queues, stores, /health, /metrics, graceful shutdown) and the plugin's module.
 * A bad setting, the core's or the plugin's, stops the process with a message naming it.
 */
export async function bootstrapPlugin<C>(definition: PluginDefinition<C>): Promise<void> {
  const service = `plugin-${definition.name}`;
  let config: C;
  try {
    config = loadPluginConfig(definition);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${service}: ${error.message}\n`);
    process.exit(2);
  }
  await bootstrapService(service, pluginModule(definition, config));
}
