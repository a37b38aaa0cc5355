// For tests only (`@crawler/config/testing`): the settings tables of docs/configuration.md, generated from the schemas.
import { readFileSync, writeFileSync } from 'node:fs';
import ts from 'typescript';
import { z } from 'zod';
import { envNames } from '@crawler/settings';

/** One setting as docs/configuration.md shows it: its variable, its doc comment, its `@defaultValue`. */
export interface SettingDoc {
  env: string;
  meaning: string;
  defaultValue?: string;
}

/** The doc comment of every field declaring `.meta({ env: '…' })` in a source file, by variable. */
function docCommentsByEnv(sourcePath: string): Map<string, SettingDoc> {
  const source = ts.createSourceFile(sourcePath, readFileSync(sourcePath, 'utf8'), ts.ScriptTarget.Latest, true);
  const found = new Map<string, SettingDoc>();
  const visit = (node: ts.Node): void => {
    const env = ts.isPropertyAssignment(node) ? /\.meta\(\{ env: '([A-Z0-9_]+)'(?:, [^}]*)? \}\)$/.exec(node.initializer.getText())?.[1] : undefined;
    const jsDoc = (node as { jsDoc?: ts.JSDoc[] }).jsDoc?.at(-1);
    if (env && jsDoc) {
      const text = jsDoc
        .getText()
        .replace(/^\/\*\*|\*\/$/g, '')
        .split('\n')
        .map((line) => line.replace(/^\s*\* ?/, ''))
        .join(' ')
        .replace(/\s+/g, ' ')
        .trim();
      const [meaning, defaultValue] = text.split(/\s*@defaultValue\s+/);
      found.set(env, { env, meaning, defaultValue });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** A literal default is shown as code; one described in words (or already holding code) as written. */
function shownDefault(value: string | undefined): string {
  if (value === undefined) return '—';
  return !value.includes('`') && (value.startsWith("'") || !value.includes(' ')) ? `\`${value}\`` : value;
}

/** The field at a dot path (`frontier.minDelayMs`) of an object schema. */
function fieldAt(schema: z.ZodType, path: string): z.ZodType {
  let node = schema;
  for (const key of path.split('.')) {
    while (node instanceof z.ZodPipe) node = node.in as z.ZodType;
    node = (node as z.ZodObject).shape[key] as z.ZodType;
  }
  return node;
}

/** A number, boolean or string default must read in the doc comment as the schema has it (a string quoted or not). */
function checkDefault(env: string, field: z.ZodType, written: string | undefined): void {
  if (!(field instanceof z.ZodDefault)) return;
  const value: unknown = field.def.defaultValue;
  if (!['number', 'boolean', 'string'].includes(typeof value)) return;
  if (written !== String(value) && written !== `'${value}'`) throw new Error(`${env}: @defaultValue ${written} but the schema's default is ${JSON.stringify(value)}`);
}

/**
 * The settings table of `schema`, whose fields are declared in `sourcePaths` (the core's: every library's
 * settings file), in the schema's order: every field naming a variable must have a doc comment, which is its
 * row, and a `@defaultValue` that agrees with the schema.
 */
export function settingsTable(sourcePaths: string | readonly string[], schema: z.ZodType): string {
  const sources = typeof sourcePaths === 'string' ? [sourcePaths] : sourcePaths;
  const comments = new Map(sources.flatMap((source) => [...docCommentsByEnv(source)]));
  const rows = Object.entries(envNames(schema)).map(([env, path]) => {
    const doc = comments.get(env);
    if (!doc) throw new Error(`${env} has no doc comment in ${sources.join(', ')}`);
    checkDefault(env, fieldAt(schema, path), doc.defaultValue);
    return `| \`${env}\` | ${doc.meaning.replace(/\|/g, '\\|')} | ${shownDefault(doc.defaultValue)} |`;
  });
  return ['| Variable | Meaning | Default |', '|---|---|---|', ...rows].join('\n');
}

/**
 * The doc at `docPath` with `table` between `<!-- config:begin NAME -->` and `<!-- config:end NAME -->`
 * (NAME empty for the core's), written back when UPDATE_DOCS=1; returns [the doc as it is, as it should be].
 */
export function refreshDocTable(docPath: string, name: string, table: string): [string, string] {
  const begin = `<!-- config:begin${name ? ` ${name}` : ''} -->`;
  const end = `<!-- config:end${name ? ` ${name}` : ''} -->`;
  const doc = readFileSync(docPath, 'utf8');
  const from = doc.indexOf(begin);
  const to = doc.indexOf(end);
  if (from < 0 || to < from) throw new Error(`${docPath} has no ${begin} … ${end}`);
  const fresh = `${doc.slice(0, from + begin.length)}\n${table}\n${doc.slice(to)}`;
  if (process.env.UPDATE_DOCS === '1') writeFileSync(docPath, fresh);
  return [readFileSync(docPath, 'utf8'), fresh];
}
