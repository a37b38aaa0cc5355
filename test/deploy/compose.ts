import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Ajv from 'ajv';
import { parse } from 'yaml';

/**
 * docker-compose.yml as Compose reads it: YAML with merge keys (`<<: *anchor`), then `${VAR}` interpolation
 * from the environment, then validation against the Compose Specification's JSON schema.
 */

/** The Compose Specification JSON schema (compose-spec/compose-spec schema/compose-spec.json), as dclint ships it. */
export function composeSchemaFile(): string {
  // dclint's package exports hide its schemas/ folder: find the package from its main file.
  let dir = dirname(require.resolve('dclint'));
  while (!dir.endsWith(join('node_modules', 'dclint'))) dir = dirname(dir);
  return join(dir, 'schemas', 'compose.schema.json');
}

/** Compose's interpolation: $$, $VAR, ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?error}, ${VAR?error}, ${VAR:+alt}, ${VAR+alt}. */
export function interpolate(text: string, env: Record<string, string | undefined>, where: string): string {
  return text.replace(/\$(\$|[A-Za-z_][A-Za-z0-9_]*|\{([^}]*)\})/g, (match, token: string, braced: string | undefined) => {
    if (token === '$') return '$';
    if (braced === undefined) return env[token] ?? '';
    const m = /^([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])(.*))?$/s.exec(braced);
    if (!m) throw new Error(`${where}: cannot interpolate ${match}`);
    const [, name, op, arg = ''] = m;
    if (arg.includes('$')) throw new Error(`${where}: nested interpolation in ${match} is not implemented`);
    const value = env[name];
    const unset = value === undefined;
    const empty = unset || value === '';
    switch (op) {
      case undefined:
        return value ?? '';
      case ':-':
        return empty ? arg : value!;
      case '-':
        return unset ? arg : value!;
      case ':?':
      case '?':
        if (op === ':?' ? empty : unset) throw new Error(`${where}: required variable ${name} is missing: ${arg}`);
        return value!;
      case ':+':
        return empty ? '' : arg;
      case '+':
        return unset ? '' : arg;
      default:
        throw new Error(`${where}: cannot interpolate ${match}`);
    }
  });
}

function interpolateAll(value: unknown, env: Record<string, string | undefined>, where: string): unknown {
  if (typeof value === 'string') return interpolate(value, env, where);
  if (Array.isArray(value)) return value.map((v, i) => interpolateAll(v, env, `${where}[${i}]`));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolateAll(v, env, `${where}.${k}`)]));
  }
  return value;
}

export interface ComposeService {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string | string[];
  entrypoint?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  ports?: (string | number | Record<string, unknown>)[];
  volumes?: (string | Record<string, unknown>)[];
  depends_on?: string[] | Record<string, { condition: string }>;
  profiles?: string[];
  healthcheck?: { test?: string | string[]; disable?: boolean };
  [key: string]: unknown;
}

export interface ComposeFile {
  name?: string;
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
  [key: string]: unknown;
}

/** Reads a Compose file the way `docker compose config` does (merge keys, interpolation), with `env` as the shell. */
export function loadCompose(file: string, env: Record<string, string | undefined> = {}): ComposeFile {
  const raw = parse(readFileSync(file, 'utf8'), { merge: true }) as unknown;
  return interpolateAll(raw, env, file) as ComposeFile;
}

/** The schema's complaints about a loaded Compose file, one line each. */
export function composeSchemaProblems(model: unknown): string[] {
  const schema = JSON.parse(readFileSync(composeSchemaFile(), 'utf8'));
  // strict: false, because the schema uses annotations Ajv does not know (`deprecated`).
  const ajv = new Ajv({ allErrors: true, strict: false });
  // The schema names draft-07 by its https address; Ajv knows the meta-schema by its http one.
  const draft07 = require('ajv/dist/refs/json-schema-draft-07.json');
  if (schema.$schema !== draft07.$id.replace(/#$/, '')) ajv.addMetaSchema({ ...draft07, $id: schema.$schema });
  const validate = ajv.compile(schema); // validates the schema against its meta-schema first
  if (validate(model)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
}

/** A service's environment as a map (Compose accepts a map or a list of NAME=value). */
export function environmentOf(service: ComposeService): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) {
    return Object.fromEntries(
      env.map((entry) => {
        const eq = entry.indexOf('=');
        return eq < 0 ? [entry, ''] : [entry.slice(0, eq), entry.slice(eq + 1)];
      }),
    );
  }
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === null ? '' : String(v)]));
}

/** A command as its argument list (Compose splits a string the way a shell would; ours are lists). */
export function argv(command: string | string[] | undefined): string[] {
  if (command === undefined) return [];
  return Array.isArray(command) ? command : command.split(/\s+/).filter(Boolean);
}
