import { Inject, Injectable, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { PluginFetched, PluginJob, PluginManifest, PluginPage, pluginQueue } from '@crawler/contracts';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { BODY_STAGING, BodyStaging } from '@crawler/content-store';
import { PluginRegistry } from '@crawler/plugin-host';
import { Pipeline } from '@crawler/runtime';
import { PluginContext } from './plugin-context';
import { PluginHandler } from './plugin-definition';
import { PLUGIN_CONCURRENCY, PLUGIN_HANDLER, PLUGIN_MANIFEST } from './plugin.tokens';

/**
 * Runs one plugin: registers its manifest (so core services learn what it claims), then consumes its queue
 * `plugin.<name>`, handing each job to the plugin's handler. For a claimed response it reads the staged body
 * first and releases it once the handler is done (a handler that throws keeps it for the retry).
 */
@Injectable()
export class PluginHost implements OnModuleInit, OnApplicationBootstrap {
  constructor(
    @Inject(PLUGIN_MANIFEST) private readonly manifest: PluginManifest,
    @Inject(PLUGIN_HANDLER) private readonly handler: PluginHandler,
    private readonly context: PluginContext<unknown>,
    private readonly registry: PluginRegistry,
    private readonly pipeline: Pipeline,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
    @Inject(PLUGIN_CONCURRENCY) private readonly concurrency: number,
    @Inject(BODY_STAGING) private readonly staging: BodyStaging,
  ) {}

  /** Before any core service reads the registry (they read it from onApplicationBootstrap on). */
  async onModuleInit() {
    await this.registry.register(this.manifest);
    const enabled = this.config.plugins.enabled.includes(this.manifest.name);
    if (enabled) this.context.logger.info({ event: 'plugin-registered', manifest: this.manifest }, `plugin ${this.manifest.name} registered`);
    else {
      this.context.logger.warn(
        { event: 'plugin-not-enabled', plugins: this.config.plugins.enabled },
        `plugin ${this.manifest.name} is running but PLUGINS does not name it: the crawl sends it nothing`,
      );
    }
  }

  async onApplicationBootstrap() {
    await this.pipeline.consume(pluginQueue(this.manifest.name), (job) => this.handle(job), { concurrency: this.concurrency });
  }

  /** One job of the plugin's queue (public for tests). */
  async handle(job: PluginJob): Promise<void> {
    if (job.hook === 'fetched') return this.fetched(job);
    return this.page(job);
  }

  private async fetched(job: PluginFetched) {
    if (!this.handler.onFetched) return this.unhandled(job);
    const staged = await this.staging.read(job.bodyKey);
    if (!staged) {
      // Released only once a delivery of this job is done with it (by the host, or by the parser for a page
      // handed on): this is a redelivery of work already done, and retrying it would only end in dead letters.
      this.context.logger.info({ event: 'staged-body-gone', url: job.url, bodyKey: job.bodyKey }, `plugin ${this.manifest.name}: ${job.url} was already handled`);
      await this.context.count('skipped.staged-body-gone');
      return;
    }
    await this.handler.onFetched(job, staged.body);
    // A page handed on to the parser as fetched is the parser's to release.
    if (!this.context.takeHandedOn(job.bodyKey)) await this.staging.release(job.bodyKey);
  }

  private async page(job: PluginPage) {
    if (!this.handler.onPage) return this.unhandled(job);
    await this.handler.onPage(job);
  }

  /** A job of a kind the plugin does not handle (its manifest changed while jobs were queued): dropped, counted. */
  private async unhandled(job: PluginJob) {
    this.context.logger.warn({ event: 'plugin-unhandled', hook: job.hook, url: job.url }, `plugin ${this.manifest.name} has no ${job.hook} hook`);
    await this.context.count(`unhandled.${job.hook}`);
    if (job.hook === 'fetched') await this.staging.release(job.bodyKey);
  }
}
