import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join, relative } from 'node:path';
import { ConfigError, ENV_NAMES, loadConfig } from '@crawler/config';
import { SERVICE_NAMES } from '@crawler/contracts';
import { findPlugin, installedPlugins, loadPluginConfig, PluginDefinition } from '@crawler/plugin-sdk';
import { tempDir } from '../support/temp-dirs';

/** What the deployment tests share: the checkout, its apps, the settings they read, the image's entrypoint. */

export const ROOT = join(__dirname, '../..');

/** Every app under apps/. */
export const APPS = readdirSync(join(ROOT, 'apps'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();
/**
 * The services a deployment runs: those of the service map, and each plugin's (`apps/plugin-<name>`).
 * test/architecture/service-map.test.ts checks that these are all the apps but `crawl`, the CLI.
 */
export const SERVICES: string[] = [...SERVICE_NAMES, ...APPS.filter((app) => app.startsWith('plugin-'))];

/**
 * A copy of k8s/ with these of its optional components enabled, as a user enables them (a `components:` list
 * in k8s/kustomization.yaml), to build with kustomize.
 */
export function k8sWithComponents(components: string[]): string {
  const copy = tempDir('k8s-components-');
  cpSync(join(ROOT, 'k8s'), copy, { recursive: true });
  const file = join(copy, 'kustomization.yaml');
  writeFileSync(file, `${readFileSync(file, 'utf8')}\ncomponents:\n${components.map((c) => `  - ${c}\n`).join('')}`);
  return copy;
}

/**
 * The services that keep the per-page records (RECORDS_URL): those whose library injects the RecordsStore
 * (libs/<service>/src), found in the sources, so a new reader of the records is wired in every install.
 */
export function servicesKeepingRecords(): string[] {
  return SERVICES.filter(
    (service) =>
      existsSync(join(ROOT, 'libs', service, 'src')) &&
      sources(`libs/${service}/src`).some((f) => readFileSync(join(ROOT, f), 'utf8').includes('@Inject(RECORDS_STORE)')),
  );
}

/** The build output that runs an app (the tests run after `npm run build`). */
export const mainOf = (app: string) => join(ROOT, 'dist/apps', app, 'src/main.js');

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.ts') && !/\.(spec|test)\.ts$/.test(f))
    .map((f) => join(dir, f));
}

/** Environment variables the programs read outside the validated configuration (process.env.NAME in apps/ and libs/). */
function directEnvReads(): Map<string, string[]> {
  const reads = new Map<string, string[]>();
  for (const file of [...sources('apps'), ...sources('libs')]) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const m of text.matchAll(/process\.env(?:\.([A-Za-z_][A-Za-z0-9_]*)|\[\s*['"]([A-Za-z_][A-Za-z0-9_]*)['"]\s*\])/g)) {
      const name = m[1] ?? m[2];
      reads.set(name, [...(reads.get(name) ?? []), file]);
    }
  }
  return reads;
}

/** The plugins under libs/, by their definitions. */
function pluginDefinitions(): PluginDefinition<unknown>[] {
  return installedPlugins(join(ROOT, 'libs')).map((name) => findPlugin(name));
}

/** Every variable a crawler container may be given: the validated configuration's, the plugins' own settings, and the direct reads. */
export function readableEnvNames(): Set<string> {
  const pluginSettings = pluginDefinitions().flatMap((plugin) => Object.keys(plugin.config?.env ?? {}));
  return new Set([...Object.keys(ENV_NAMES), ...pluginSettings, ...directEnvReads().keys()]);
}

/** Names in `env` that no program reads (a typo, or a setting that does not exist). */
export function unknownEnvNames(env: Record<string, string>): string[] {
  const known = readableEnvNames();
  return Object.keys(env).filter((name) => !known.has(name));
}

/** Whether a service would boot with this configuration (the core's and every plugin's settings), or the ConfigError's message when it would refuse to start. */
export function configProblem(env: Record<string, string>): string | undefined {
  try {
    loadConfig(env);
    for (const plugin of pluginDefinitions()) loadPluginConfig(plugin, env);
    return undefined;
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
}

export const ENTRYPOINT = join(ROOT, 'scripts/docker-entrypoint.sh');

export interface EntrypointRun {
  status: number | null;
  /** What `node` was started with, when the entrypoint got that far. */
  node?: string[];
  stderr: string;
}

/**
 * Runs the image's entrypoint script for real, with a stand-in `node` first on PATH that records its
 * arguments instead of starting anything.
 */
export function runEntrypoint(dir: string, args: string[], env: Record<string, string> = {}, entrypoint = ENTRYPOINT): EntrypointRun {
  const stub = join(dir, 'node');
  if (!existsSync(stub)) {
    writeFileSync(stub, `#!/bin/sh\nfor a in "$@"; do printf '%s\\n' "$a"; done > "${join(dir, 'node-argv')}"\n`);
    chmodSync(stub, 0o755);
  }
  const record = join(dir, 'node-argv');
  writeFileSync(record, '');
  const result = spawnSync('sh', [entrypoint, ...args], {
    env: { PATH: `${dir}${delimiter}${process.env.PATH}`, ...env },
    encoding: 'utf8',
  });
  const recorded = readFileSync(record, 'utf8');
  return {
    status: result.status,
    node: recorded ? recorded.replace(/\n$/, '').split('\n') : undefined,
    stderr: result.stderr,
  };
}

/** A path relative to the checkout, for messages. */
export const rel = (path: string) => relative(ROOT, path);
