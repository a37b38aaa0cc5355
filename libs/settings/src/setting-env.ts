import { z } from 'zod';

declare module 'zod' {
  interface GlobalMeta {
    /** The environment variable a setting is read from, declared with the field: `.meta({ env: 'REDIS_URL' })`. */
    env?: string;
  }
}

/**
 * Environment variable → dot path (`frontier.minDelayMs`) of every field of `schema` that names one, nested
 * objects included; a schema refined as a whole (`z.object(…).transform(…)`) is read through to its object.
 */
export function envNames(schema: z.ZodType, prefix = ''): Record<string, string> {
  while (schema instanceof z.ZodPipe) schema = schema.in as z.ZodType;
  if (!(schema instanceof z.ZodObject)) return {};
  const names: Record<string, string> = {};
  for (const [key, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
    const env = field.meta()?.env;
    if (env) names[env] = prefix + key;
    else Object.assign(names, envNames(field, `${prefix}${key}.`));
  }
  return names;
}
