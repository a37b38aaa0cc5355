import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { DynamicModule } from '@nestjs/common';
import { ConfigError } from '@crawler/config';
import { loadPluginConfig } from './plugin-config';
import { isPluginDefinition, PluginDefinition } from './plugin-definition';
import { pluginModule } from './plugin.module';

/** Where plugin libraries live: `libs/plugin-<name>/src`, next to this library (in the checkout and in dist/). */
const LIBS = join(__dirname, '..', '..');

/** `libs/plugin-<name>` folders that are not plugins: the SDK plugins import, and the host that runs them. */
const NOT_PLUGINS = new Set(['sdk', 'host']);

/** The names of the plugins present: every `libs/plugin-<name>` but the SDK and the host. */
export function installedPlugins(libs: string = LIBS): string[] {
  return readdirSync(libs)
    .filter((dir) => dir.startsWith('plugin-') && !NOT_PLUGINS.has(dir.slice('plugin-'.length)))
    .map((dir) => dir.slice('plugin-'.length))
    .sort();
}

/**
 * The plugin library of `name`, found by convention: `libs/plugin-<name>` exports a definition made with
 * definePlugin. This is how the embedded crawl loads the plugins PLUGINS names without importing any:
 * adding a plugin is adding its library (and its app), never an edit to the crawler.
 */
export function findPlugin(name: string, libs: string = LIBS): PluginDefinition<unknown> {
  const dir = join(libs, `plugin-${name}`, 'src');
  if (NOT_PLUGINS.has(name) || !/^[a-z][a-z0-9-]{0,31}$/.test(name) || !existsSync(dir)) {
    throw new ConfigError([`PLUGINS: no plugin "${name}" (there is no libs/plugin-${name})`]);
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const exported = require(dir) as Record<string, unknown>;
  const definitions = Object.values(exported).filter(isPluginDefinition);
  const definition = definitions.find((d) => d.name === name);
  if (!definition) throw new ConfigError([`PLUGINS: libs/plugin-${name} exports no plugin definition named "${name}" (definePlugin)`]);
  return definition;
}

/**
 * The modules of the plugins `names` enables, their settings validated (a bad one throws a ConfigError
 * naming it), for a process that runs them in-line: the embedded crawl.
 */
export function loadPlugins(names: readonly string[], env: NodeJS.ProcessEnv = process.env, libs: string = LIBS): DynamicModule[] {
  const problems: string[] = [];
  const modules: DynamicModule[] = [];
  for (const name of names) {
    try {
      const definition = findPlugin(name, libs);
      modules.push(pluginModule(definition, loadPluginConfig(definition, env)));
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems);
    }
  }
  if (problems.length) throw new ConfigError(problems);
  return modules;
}
