import { z } from 'zod';

declare module 'zod' {
  interface GlobalMeta {
    /** The environment variable a setting is read from, declared with the field: `.meta({ env: 'REDIS_URL' })`. */
    env?: string;
    /**
     * How the variable's text is read, when not as the one value it is: `list` comma-separated and lower-cased,
     * `lines` one entry a line as written (a URL rule may hold commas and capitals), `pairs` `NAME=IP` pairs.
     */
    read?: 'list' | 'lines' | 'pairs';
    /** The value never appears in an error message. */
    secret?: boolean;
  }
}

/**
 * Dot path (`frontier.minDelayMs`) → meta of every field of `schema` that names a variable, nested objects
 * included, in the schema's order; a schema refined as a whole (`z.object(…).transform(…)`) is read through to
 * its object.
 */
export function settingFields(schema: z.ZodType, prefix = ''): Record<string, z.GlobalMeta & { env: string }> {
  while (schema instanceof z.ZodPipe) schema = schema.in as z.ZodType;
  if (!(schema instanceof z.ZodObject)) return {};
  const fields: Record<string, z.GlobalMeta & { env: string }> = {};
  for (const [key, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
    const meta = field.meta();
    if (meta?.env) fields[prefix + key] = { ...meta, env: meta.env };
    else Object.assign(fields, settingFields(field, `${prefix}${key}.`));
  }
  return fields;
}

/** Environment variable → dot path of every field of `schema` that names one. */
export function envNames(schema: z.ZodType): Record<string, string> {
  return Object.fromEntries(Object.entries(settingFields(schema)).map(([path, meta]) => [meta.env, path]));
}
