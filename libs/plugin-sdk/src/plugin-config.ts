import type { z } from 'zod';
import { ConfigError } from '@crawler/config';
import { envNames } from '@crawler/settings';
import type { PluginConfigSpec, PluginDefinition } from './plugin-definition';

/** A plugin's settings as its schema declares them: each field names its variable with `.meta({ env })`. */
export function pluginConfig<S extends z.ZodType>(schema: S): PluginConfigSpec<z.output<S>> {
  return { schema: schema as unknown as z.ZodType<z.output<S>>, env: envNames(schema) as Record<string, keyof z.output<S> & string> };
}

/**
 * The plugin's settings from the environment, validated by its schema. A bad value throws a ConfigError
 * naming the variable, the value and what is allowed (the core's loadConfig does the same for its own).
 */
export function loadPluginConfig<C>(definition: PluginDefinition<C>, env: NodeJS.ProcessEnv = process.env): C {
  const spec = definition.config;
  if (!spec) return {} as C;
  const input: Record<string, string> = {};
  const envOf: Record<string, string> = {};
  for (const [name, field] of Object.entries(spec.env)) {
    envOf[field] = name;
    const raw = env[name];
    if (raw !== undefined && raw !== '') input[field] = raw;
  }
  const result = spec.schema.safeParse(input);
  if (result.success) return result.data;
  throw new ConfigError(
    result.error.issues.map((issue) => {
      const field = String(issue.path[0] ?? '');
      const name = envOf[field] ?? `plugin ${definition.name}${field ? ` ${field}` : ''}`;
      return `${name}: ${issue.message} (got ${JSON.stringify(input[field])})`;
    }),
  );
}
