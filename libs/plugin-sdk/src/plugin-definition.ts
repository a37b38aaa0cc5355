import type { Provider, Type } from '@nestjs/common';
import type { z } from 'zod';
import { PLUGIN_NAME, PluginFetched, PluginManifest, PluginPage, Prioritizer, pluginQueue, SCHEMA_VERSION } from '@crawler/contracts';
import type { CrawlerConfig } from '@crawler/config';
import type { Logger } from '@crawler/logging';
import type { StateStore } from '@crawler/state';

/** What a plugin claims (every field optional; see PluginManifest in libs/contracts for their meaning). */
export interface PluginClaimsInput {
  /** Media types (`image/png`, `image/*`) the downloader sends to the plugin instead of dropping them. */
  contentTypes?: string[];
  /** URL extensions (`png`) the filter lets through and the extractor follows from `<img>` / `<link>`. */
  extensions?: string[];
  /** Path globs (`/avatars/*`, `/feeds/**`) claimed like extensions. */
  urlPatterns?: string[];
  /**
   * Path globs of HTML pages the plugin takes before the parser: they arrive at `onFetched`, and the plugin
   * hands each on with `PluginContext.toParser` (as fetched, or with a body of its own: a rendered page).
   */
  pages?: string[];
  /** Body bytes read for a claimed response. @defaultValue DOWNLOADER_MAX_BODY_BYTES */
  maxBytes?: number;
}

/**
 * The plugin's own settings: a zod schema of flat fields and the environment variable of each field. Names
 * start with `PLUGIN_<NAME>_` (`PLUGIN_PNG_MAX_BYTES`); a bad value stops the process at boot with a
 * message naming the variable, as the core's settings do.
 */
export interface PluginConfigSpec<C> {
  schema: z.ZodType<C>;
  /** Environment variable → field of the schema (pluginConfig reads it from the schema's fields). */
  env: Record<string, keyof C & string>;
}

/**
 * What a plugin does with what it is sent. Both hooks run on the plugin's own queue, in its own service
 * (or module of the embedded crawl), with retries: throw for a failure worth retrying (storage down); an
 * expected rejection (a corrupt file) is an outcome, counted, not an exception.
 */
export interface PluginHandler {
  /**
   * A response of a type (or a URL) the plugin claims, or an HTML page it takes before the parser, and its
   * body (the SDK reads it and releases it after, unless handed on as fetched with PluginContext.toParser).
   */
  onFetched?(fetched: PluginFetched, body: Buffer): Promise<void>;
  /** A new (not duplicate) parsed page, for plugins with `pageHook: true`. The text: PluginContext.pageText. */
  onPage?(page: PluginPage): Promise<void>;
}

/** Everything a plugin is: the one object a plugin library exports (`export const plugin = definePlugin({…})`). */
export interface PluginDefinition<C = Record<string, never>> {
  /** `PLUGINS=<name>`; its lib is `libs/plugin-<name>`, its app `apps/plugin-<name>`, its queue `plugin.<name>`. */
  readonly name: string;
  /** What it claims; a function when that depends on its settings (a size limit). */
  readonly claims?: PluginClaimsInput | ((config: C) => PluginClaimsInput);
  /** Whether it wants every new parsed page (PluginHandler.onPage). @defaultValue false */
  readonly pageHook?: boolean;
  /** Its own settings. */
  readonly config?: PluginConfigSpec<C>;
  /** The handler class (a Nest provider: it may inject PluginContext and `providers`). */
  readonly handler: Type<PluginHandler>;
  /** More providers for its module. */
  readonly providers?: Provider[];
  /**
   * Its prioritizer, built once in the process that runs the frontier (the frontier service, or the embedded
   * crawl) and chained after the frontier's own breadth-first scoring: how a plugin changes what is fetched first.
   */
  readonly prioritizer?: PrioritizerFactory<C>;
  /** Whether links carry the page they were found on (PluginManifest.referrers). @defaultValue false */
  readonly referrers?: boolean;
  /** Jobs of its queue handled at once per process. @defaultValue 4 */
  readonly concurrency?: number | ((config: C) => number);
}

/** What a plugin's prioritizer is built with, in the frontier's process. */
export interface PrioritizerContext<C> {
  readonly name: string;
  /** The plugin's validated settings. */
  readonly config: C;
  /** The crawler's settings, read-only. */
  readonly crawler: CrawlerConfig;
  /** The plugin's own state (the same keys as PluginContext.state): what its page hook learns, read here. */
  readonly state: StateStore;
  /** Logs, every line with `plugin: <name>`. */
  readonly logger: Logger;
}

export type PrioritizerFactory<C> = (context: PrioritizerContext<C>) => Prioritizer;

const DEFINITION = Symbol.for('crawler.plugin-definition');

/** Checks and marks a plugin definition; the embedded crawl finds a plugin library's definition by this mark. */
export function definePlugin<C = Record<string, never>>(definition: PluginDefinition<C>): PluginDefinition<C> {
  if (!PLUGIN_NAME.test(definition.name)) {
    throw new Error(`plugin name ${JSON.stringify(definition.name)}: lower-case letters, digits and '-', starting with a letter`);
  }
  const prefix = `PLUGIN_${definition.name.toUpperCase().replace(/-/g, '_')}_`;
  const stray = Object.keys(definition.config?.env ?? {}).filter((name) => !name.startsWith(prefix));
  if (stray.length) throw new Error(`plugin ${definition.name}: settings must be named ${prefix}…, not ${stray.join(', ')}`);
  const proto = definition.handler.prototype as PluginHandler;
  const claims = typeof definition.claims === 'function' ? undefined : definition.claims;
  if ((definition.claims !== undefined && claims === undefined) || hasClaims(claims)) {
    if (typeof proto.onFetched !== 'function') throw new Error(`plugin ${definition.name} claims responses but its handler has no onFetched`);
  }
  if (definition.pageHook && typeof proto.onPage !== 'function') throw new Error(`plugin ${definition.name} has a page hook but its handler has no onPage`);
  return Object.freeze({ ...definition, [DEFINITION]: true });
}

export function isPluginDefinition(value: unknown): value is PluginDefinition<unknown> {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[DEFINITION] === true;
}

function hasClaims(claims: PluginClaimsInput | undefined): boolean {
  return Boolean(claims && (claims.contentTypes?.length || claims.extensions?.length || claims.urlPatterns?.length || claims.pages?.length));
}

/** The manifest a plugin registers, from its definition and validated settings. */
export function pluginManifest<C>(definition: PluginDefinition<C>, config: C): PluginManifest {
  const claims = typeof definition.claims === 'function' ? definition.claims(config) : (definition.claims ?? {});
  return PluginManifest.parse({
    v: SCHEMA_VERSION,
    name: definition.name,
    claims: {
      contentTypes: (claims.contentTypes ?? []).map((t) => t.toLowerCase()),
      extensions: (claims.extensions ?? []).map((e) => e.replace(/^\./, '').toLowerCase()),
      urlPatterns: claims.urlPatterns ?? [],
      ...(claims.pages?.length ? { pages: claims.pages } : {}),
      ...(claims.maxBytes === undefined ? {} : { maxBytes: claims.maxBytes }),
    },
    pageHook: definition.pageHook ?? false,
    ...(definition.referrers ? { referrers: true } : {}),
    queue: pluginQueue(definition.name),
  });
}

/** Jobs handled at once. */
export function pluginConcurrency<C>(definition: PluginDefinition<C>, config: C): number {
  const value = typeof definition.concurrency === 'function' ? definition.concurrency(config) : definition.concurrency;
  return value ?? 4;
}
