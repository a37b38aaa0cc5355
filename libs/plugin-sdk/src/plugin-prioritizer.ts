import type { Prioritizer } from '@crawler/contracts';
import type { CrawlerConfig } from '@crawler/config';
import { ConfigError } from '@crawler/config';
import type { Logger } from '@crawler/logging';
import type { StateStore } from '@crawler/state';
import { loadPluginConfig } from './plugin-config';
import { findPlugin } from './plugin-loader';

/** What the frontier's process gives the prioritizers of the plugins: its shared state store and its logger. */
export interface PrioritizerHost {
  crawler: CrawlerConfig;
  state: StateStore;
  logger: Logger;
}

/**
 * The prioritizers of the plugins `names` enables (those that have one), in that order, built for the frontier.
 * Found by name as the embedded crawl finds plugins (libs/plugin-<name>), so the frontier imports none; a name
 * with no plugin library is passed over (it has no prioritizer here); a bad setting throws a ConfigError naming it.
 */
export function loadPrioritizers(names: readonly string[], host: PrioritizerHost, env: NodeJS.ProcessEnv = process.env, libs?: string): Prioritizer[] {
  const problems: string[] = [];
  const prioritizers: Prioritizer[] = [];
  for (const name of names) {
    let definition;
    try {
      definition = findPlugin(name, libs);
    } catch (error) {
      // Not a plugin library (a module loaded in-process, as tests do; or a name the plugin's own service and
      // the embedded crawl's loadPlugins refuse): it has no prioritizer for this process to run.
      if (error instanceof ConfigError) continue;
      throw error;
    }
    if (!definition.prioritizer) continue;
    try {
      const config = loadPluginConfig(definition, env);
      prioritizers.push(
        definition.prioritizer({
          name,
          config,
          crawler: host.crawler,
          state: host.state.namespace(`plugin-${name}`),
          logger: host.logger.child({ plugin: name }),
        }),
      );
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems);
    }
  }
  if (problems.length) throw new ConfigError(problems);
  return prioritizers;
}
