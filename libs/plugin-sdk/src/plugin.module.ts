import { DynamicModule, Module } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { BODY_STAGING, BodyStaging, CONTENT_STORE, ContentStore, PAGE_STORE, PageStore } from '@crawler/content-store';
import { LOGGER, Logger } from '@crawler/logging';
import { PluginHostModule } from '@crawler/plugin-host';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { STATE_STORE, StateStore } from '@crawler/state';
import { Registry } from 'prom-client';
import { loadPluginConfig } from './plugin-config';
import { PluginContext } from './plugin-context';
import { PluginDefinition, pluginConcurrency, pluginManifest } from './plugin-definition';
import { PluginHost } from './plugin-host.service';
import { PLUGIN_CONCURRENCY, PLUGIN_CONFIG, PLUGIN_HANDLER, PLUGIN_MANIFEST } from './plugin.tokens';

/**
 * The Nest module of one plugin, to load next to the RuntimeModule: in its own service (bootstrapPlugin)
 * or in the embedded crawl (loadPlugins). `config` is the plugin's settings, validated beforehand
 * (loadPluginConfig) so that a bad value stops the process before anything starts; by default they are
 * read from the environment here.
 */
export function pluginModule<C>(definition: PluginDefinition<C>, config: C = loadPluginConfig(definition)): DynamicModule {
  // A class of its own per plugin, so that two plugins in one process are two modules with their own providers.
  const PluginModule = { [`${camel(definition.name)}PluginModule`]: class {} }[`${camel(definition.name)}PluginModule`];
  Module({})(PluginModule);
  return {
    module: PluginModule,
    imports: [PluginHostModule],
    providers: [
      { provide: PLUGIN_CONFIG, useValue: config },
      { provide: PLUGIN_MANIFEST, useValue: pluginManifest(definition, config) },
      { provide: PLUGIN_CONCURRENCY, useValue: pluginConcurrency(definition, config) },
      {
        provide: PluginContext,
        inject: [CRAWLER_CONFIG, STATE_STORE, CONTENT_STORE, PAGE_STORE, Registry, Pipeline, CrawlStats, LOGGER, BODY_STAGING],
        useFactory: (
          crawler: CrawlerConfig,
          state: StateStore,
          content: ContentStore,
          pages: PageStore,
          metrics: Registry,
          pipeline: Pipeline,
          stats: CrawlStats,
          logger: Logger,
          staging: BodyStaging,
        ) => new PluginContext(definition.name, config, crawler, state, content, pages, metrics, pipeline, stats, logger, staging),
      },
      ...(definition.providers ?? []),
      definition.handler,
      { provide: PLUGIN_HANDLER, useExisting: definition.handler },
      PluginHost,
    ],
    exports: [PluginContext, PLUGIN_MANIFEST],
  };
}

function camel(name: string): string {
  return name.replace(/(^|-)([a-z0-9])/g, (_, __, c: string) => c.toUpperCase());
}
