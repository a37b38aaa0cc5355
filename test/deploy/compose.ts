import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Ajv from 'ajv';
import { isNode, isScalar, parseDocument, Scalar, visit } from 'yaml';

/**
 * Compose files as Compose reads them: YAML with merge keys (`<<: *anchor`), later files merged over earlier
 * ones (`-f docker-compose.yml -f docker-compose.cluster.yml`), then `${VAR}` interpolation from the
 * environment, then validation against the Compose Specification's JSON schema.
 */

/** The Compose Specification JSON schema (compose-spec/compose-spec schema/compose-spec.json), as dclint ships it. */
export function composeSchemaFile(): string {
  // dclint's package exports hide its schemas/ folder: find the package from its main file.
  let dir = dirname(require.resolve('dclint'));
  while (!dir.endsWith(join('node_modules', 'dclint'))) dir = dirname(dir);
  return join(dir, 'schemas', 'compose.schema.json');
}

/** Compose's interpolation: $$, $VAR, ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?error}, ${VAR?error}, ${VAR:+alt}, ${VAR+alt}. */
function interpolate(text: string, env: Record<string, string | undefined>, where: string): string {
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
  build?: string | { context?: string; dockerfile?: string; target?: string };
  command?: string | string[];
  entrypoint?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  ports?: (string | number | Record<string, unknown>)[];
  volumes?: (string | Record<string, unknown>)[];
  depends_on?: string[] | Record<string, { condition: string }>;
  profiles?: string[];
  healthcheck?: { test?: string | string[]; disable?: boolean };
  configs?: (string | { source: string; target?: string })[];
  [key: string]: unknown;
}

export interface ComposeFile {
  name?: string;
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
  [key: string]: unknown;
}

/** Compose's merge tags: `!override` replaces the earlier file's value, `!reset` removes it. */
const TAGS = ['!override', '!reset'] as const;
type Tag = (typeof TAGS)[number];
/** A tagged key, as the YAML reader below renames it for the merge: `depends_on !override`. */
const TAGGED_KEY = / (!override|!reset)$/;

/** One file's YAML, its merge tags moved onto their keys so that they survive into plain values. */
function readComposeYaml(file: string): Record<string, unknown> {
  const doc = parseDocument(readFileSync(file, 'utf8'), { merge: true });
  visit(doc, {
    Pair(_, pair) {
      const tag = isNode(pair.value) ? (pair.value.tag as Tag | undefined) : undefined;
      if (!tag || !TAGS.includes(tag)) return;
      if (!isScalar(pair.key)) throw new Error(`${file}: ${tag} on a key that is not a plain name`);
      pair.key = new Scalar(`${String(pair.key.value)} ${tag}`);
      (pair.value as { tag?: string }).tag = undefined;
    },
  });
  if (doc.errors.length) throw new Error(`${file}: ${doc.errors[0].message}`);
  return doc.toJS() as Record<string, unknown>;
}

/** Where Compose replaces a sequence of an earlier file rather than merging it (compose-spec merge.md). */
const REPLACED = [/^services\.[^.]+\.(command|entrypoint)$/, /^services\.[^.]+\.healthcheck\.test$/];

/**
 * Compose's merge of a later file over an earlier one, for what our files use: mappings merged key by key,
 * a scalar or a command replaced, a tagged key overriding or resetting. Anything else (two sequences to merge, a
 * mapping over a scalar) throws, rather than merge differently from Compose.
 */
function mergeCompose(base: unknown, over: unknown, path: string): unknown {
  const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isMap(base) || !isMap(over)) {
    const scalar = (v: unknown) => v === null || typeof v !== 'object';
    if (base === undefined || (scalar(base) && scalar(over)) || REPLACED.some((r) => r.test(path))) return over;
    throw new Error(`merging ${path || 'the file'} over an earlier value is not implemented by this loader`);
  }
  const merged: Record<string, unknown> = { ...base };
  for (const [taggedKey, value] of Object.entries(over)) {
    const key = taggedKey.replace(TAGGED_KEY, '');
    const at = path ? `${path}.${key}` : key;
    const tag = TAGGED_KEY.exec(taggedKey)?.[1];
    if (tag === '!reset') delete merged[key];
    else if (tag === '!override') merged[key] = value;
    else merged[key] = mergeCompose(merged[key], value, at);
  }
  return merged;
}

/**
 * Reads Compose files the way `docker compose -f a -f b config` does (merge keys, later files merged over
 * earlier ones, interpolation), with `env` as the shell.
 */
export function loadCompose(files: string | string[], env: Record<string, string | undefined> = {}): ComposeFile {
  const list = typeof files === 'string' ? [files] : files;
  const merged = list.map(readComposeYaml).reduce<unknown>((base, over) => mergeCompose(base, over, ''), undefined);
  return interpolateAll(merged, env, list.join(' + ')) as ComposeFile;
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
