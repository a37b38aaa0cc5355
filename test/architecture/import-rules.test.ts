import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { SERVICE_NAMES as SERVICES } from '@crawler/contracts';

/**
 * The house rules, checked on every source file: apps never import apps; contracts import no other
 * library; a service library never imports another service library (services meet only through queues);
 * nothing reaches into another app or library by relative path. Plugins (`libs/plugin-<name>`, apps
 * `apps/plugin-<name>`) are never imported by the core: core services learn of them through the plugin
 * registry (libs/plugin-host); and a plugin reaches the crawler only through the plugin SDK and the shared
 * infrastructure (plus the domain rules it must apply as the core does: libs/net, libs/robots, libs/url). Under the
 * services, the runtime (what every process loads) and the plugin host know nothing above them; the crawl
 * state builds on the runtime and knows no service. A library's test helpers (contract suites, test servers)
 * sit behind `@crawler/<lib>/testing`, which only tests import.
 */
const ROOT = join(__dirname, '../..');

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f));
}

function imports(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(/(?:from|import|require\()\s*['"]([^'"]+)['"]/g)].map((m) => m[1]);
}

const ownerOf = (file: string) => file.split('/').slice(0, 2).join('/');

/** A library's test helpers (`@crawler/<lib>/testing`) and settings (`…/settings`) are the library as far as the rules below go. */
const libraryOf = (spec: string) => spec.replace(/^(@crawler\/[^/]+)\/(testing|settings)$/, '$1');
/** The two libraries named `plugin-…` that are no plugin: what a plugin is written with, and the core's registry of them. */
const PLUGIN_FRAMEWORK = ['plugin-sdk', 'plugin-host'];
/** Plugin libraries and apps: `libs/plugin-<name>` and `apps/plugin-<name>`, the SDK and the host excepted. */
const isPluginFile = (file: string) => /^(libs|apps)\/plugin-/.test(file) && !PLUGIN_FRAMEWORK.some((lib) => file.startsWith(`libs/${lib}/`));
const isPluginImport = (spec: string) => spec.startsWith('@crawler/plugin-') && !PLUGIN_FRAMEWORK.some((lib) => libraryOf(spec) === `@crawler/${lib}`);
/** The imports of ours in a library's files that are not among `allowed` (library names). */
const importsBeyond = (lib: string, allowed: readonly string[]) =>
  sources(`libs/${lib}`).flatMap((file) =>
    imports(file)
      .filter((spec) => spec.startsWith('@crawler/') && !allowed.map((l) => `@crawler/${l}`).includes(libraryOf(spec)))
      .map((spec) => `${file} → ${spec}`),
  );
/** Shared infrastructure and domain libraries: no service, plugin, SDK, plugin host, crawl state or runtime. */
const BELOW_THE_RUNTIME = [
  'contracts',
  'config',
  'logging',
  'state',
  'queue',
  'content-store',
  'frontier-store',
  'records',
  'redis',
  'hash-ring',
  'url',
  'site-settings',
  'settings',
];
const isTestFile = (file: string) => /\.(spec|test)\.ts$/.test(file) || /\.contract\.ts$/.test(file) || file.endsWith('/src/testing.ts');
/**
 * What a plugin library may import of ours: the SDK and the shared infrastructure, the same as a core service
 * gets (the frontier store among it: a plugin that makes requests takes turns at hosts in the frontier's
 * schedule), and the domain rules a plugin must apply the same way as the core (address vetting, robots.txt, ports).
 */
const PLUGIN_MAY_IMPORT = ['plugin-sdk', 'contracts', 'config', 'runtime', 'state', 'content-store', 'frontier-store', 'logging', 'net', 'robots', 'url'].map(
  (l) => `@crawler/${l}`,
);

describe('import rules', () => {
  const files = [...sources('apps'), ...sources('libs')];

  it('finds the sources', () => expect(files.length).toBeGreaterThan(50));

  it('nothing reaches into another app or library by relative path', () => {
    const bad = files.flatMap((file) =>
      imports(file)
        .filter((spec) => spec.startsWith('.'))
        .filter((spec) => ownerOf(relative(ROOT, join(ROOT, file, '..', spec))) !== ownerOf(file))
        .map((spec) => `${file} → ${spec}`),
    );
    expect(bad).toEqual([]);
  });

  it("only tests import a library's test helpers (`@crawler/<lib>/testing`)", () => {
    const bad = files
      .filter((file) => !isTestFile(file))
      .flatMap((file) =>
        imports(file)
          .filter((spec) => spec.startsWith('@crawler/') && spec.endsWith('/testing'))
          .map((spec) => `${file} → ${spec}`),
      );
    expect(bad).toEqual([]);
  });

  it('contracts import no other library of ours', () => {
    const bad = sources('libs/contracts').flatMap((file) =>
      imports(file)
        .filter((s) => s.startsWith('@crawler/'))
        .map((s) => `${file} → ${s}`),
    );
    expect(bad).toEqual([]);
  });

  it('a service library never imports another service library', () => {
    const bad = files
      .filter((file) => SERVICES.some((s) => file.startsWith(`libs/${s}/`)))
      .flatMap((file) => {
        const own = file.split('/')[1];
        return imports(file)
          .filter((spec) => SERVICES.some((s) => libraryOf(spec) === `@crawler/${s}` && s !== own))
          .map((spec) => `${file} → ${spec}`);
      });
    expect(bad).toEqual([]);
  });

  it('the runtime imports only the infrastructure it chooses drivers from (every process loads it, whatever else it runs)', () => {
    expect(importsBeyond('runtime', BELOW_THE_RUNTIME)).toEqual([]);
  });

  it('the plugin host imports only contracts, configuration, logging, the state store and URL rules (it sits beside the runtime)', () => {
    expect(importsBeyond('plugin-host', ['contracts', 'config', 'logging', 'settings', 'state', 'url'])).toEqual([]);
  });

  it('the crawl state builds on the runtime and the stores only: no service, plugin, SDK or plugin host', () => {
    expect(importsBeyond('crawl-state', [...BELOW_THE_RUNTIME, 'runtime'])).toEqual([]);
  });

  it('a settings file (`libs/<lib>/src/*.settings.ts`) imports only the settings helpers and the shared rules its checks apply', () => {
    // The configuration imports every settings file: whatever one imports sits under every process's configuration.
    const allowed = ['@crawler/settings', '@crawler/redis', '@crawler/site-settings'];
    const bad = files
      .filter((file) => file.endsWith('.settings.ts'))
      .flatMap((file) =>
        imports(file)
          .filter((spec) => spec.startsWith('@crawler/') && !allowed.includes(spec))
          .map((spec) => `${file} → ${spec}`),
      );
    expect(bad).toEqual([]);
  });

  it("only the configuration imports a library's settings (`@crawler/<lib>/settings`), and no library besides", () => {
    const settingsOf = (spec: string) => /^@crawler\/[^/]+\/settings$/.test(spec);
    const bad = files.flatMap((file) =>
      imports(file)
        .filter((spec) => spec.startsWith('@crawler/'))
        .filter((spec) =>
          settingsOf(spec) ? !file.startsWith('libs/config/') : file.startsWith('libs/config/src/crawler-config') && !BELOW_THE_RUNTIME.includes(spec.slice(9)),
        )
        .map((spec) => `${file} → ${spec}`),
    );
    expect(bad).toEqual([]);
  });

  it('each service app bootstraps only its own module', () => {
    for (const service of SERVICES) {
      const used = imports(`apps/${service}/src/main.ts`).filter((s) => s.startsWith('@crawler/'));
      expect(used.sort()).toEqual([`@crawler/${service}`, '@crawler/runtime'].sort());
    }
  });

  it('finds the plugins', () => expect(files.filter(isPluginFile).length).toBeGreaterThan(3));

  it('no core library or app imports a plugin (core services learn of plugins from the registry)', () => {
    const bad = files
      .filter((file) => !isPluginFile(file))
      .flatMap((file) =>
        imports(file)
          .filter(isPluginImport)
          .map((spec) => `${file} → ${spec}`),
      );
    expect(bad).toEqual([]);
  });

  it('a plugin library imports only the plugin SDK and the shared infrastructure, never a service or another plugin', () => {
    const bad = files
      .filter((file) => file.startsWith('libs/') && isPluginFile(file))
      .flatMap((file) =>
        imports(file)
          .filter((spec) => spec.startsWith('@crawler/') && !PLUGIN_MAY_IMPORT.includes(libraryOf(spec)))
          .map((spec) => `${file} → ${spec}`),
      );
    expect(bad).toEqual([]);
  });

  it('the plugin SDK imports no plugin and no service library', () => {
    const bad = sources('libs/plugin-sdk').flatMap((file) =>
      imports(file)
        .filter((spec) => isPluginImport(spec) || SERVICES.some((s) => spec === `@crawler/${s}`))
        .map((spec) => `${file} → ${spec}`),
    );
    expect(bad).toEqual([]);
  });

  it('each plugin app bootstraps its own plugin through the SDK, and nothing else', () => {
    const apps = readdirSync(join(ROOT, 'apps')).filter((app) => app.startsWith('plugin-'));
    expect(apps.length).toBeGreaterThan(0);
    for (const app of apps) {
      const used = imports(`apps/${app}/src/main.ts`).filter((s) => s.startsWith('@crawler/'));
      expect(used.sort()).toEqual([`@crawler/${app}`, '@crawler/plugin-sdk'].sort());
    }
  });
});
