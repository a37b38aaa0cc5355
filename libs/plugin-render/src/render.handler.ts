import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { ConfigError, portRules, siteRenderSetting } from '@crawler/config';
import { FRONTIER_STORE, FrontierStore } from '@crawler/frontier-store';
import { PortPolicy } from '@crawler/url';
import { globToRegExp, PluginContext, PluginFetched, PluginHandler } from '@crawler/plugin-sdk';
import { BrowserCrashedError, BrowserPool } from './browser-pool';
import { RenderConfig } from './render.config';
import { renderCannotKeepRoutes } from './render-routes';
import { Renderer } from './renderer';
import { looksScriptBuilt } from './script-built';
import { SubrequestGate } from './subrequest-gate';

/** How long a page's crash count is kept: longer than its retries take. */
const CRASH_COUNT_TTL_MS = 24 * 60 * 60 * 1000;
const RENDERED_TYPE = 'text/html; charset=utf-8';

/**
 * The pages the downloader hands over before the parser (`claims.pages`): those matching
 * PLUGIN_RENDER_URL_PATTERNS, or that look script-built (PLUGIN_RENDER_DETECT, on by default), or whose site says
 * `render: true` (SITE_SETTINGS_FILE; a site's `render: false` keeps its pages from coming at all), are rendered and their
 * DOM goes on to the parser in place of the fetched HTML; the others go on as fetched. Every page goes on:
 * a render cut at the time limit goes on as fetched; one that crashed the browser is retried (the job
 * throws) up to PLUGIN_RENDER_CRASH_RETRIES times, then goes on as fetched.
 */
@Injectable()
export class RenderPluginHandler implements PluginHandler, OnModuleInit, OnApplicationShutdown {
  readonly pool: BrowserPool;
  private readonly renderer: Renderer;
  private readonly patterns: RegExp[];

  constructor(
    @Inject(PluginContext) private readonly ctx: PluginContext<RenderConfig>,
    /** The crawl's frontier store, whose per-host schedule every sub-request keeps (SubrequestGate). */
    @Inject(FRONTIER_STORE) frontier: FrontierStore,
  ) {
    const { config, crawler } = ctx;
    const refusal = renderCannotKeepRoutes(crawler);
    if (refusal) throw new ConfigError([refusal]);
    this.pool = new BrowserPool({ chromiumPath: config.chromiumPath, contexts: config.contexts, maxHeapMb: config.maxHeapMb });
    const gate = new SubrequestGate({
      resolver: ctx.resolver,
      ports: new PortPolicy(portRules(crawler)),
      userAgent: crawler.downloader.userAgent,
      maxBytes: crawler.downloader.maxBodyBytes,
      robots: ctx.robots,
      robotsTtlMs: crawler.downloader.robotsCacheTtlMs,
      onRobots: (url, status, body, error) => ctx.logger.info({ event: 'robots', url, status, body, error }),
      robotsMaxBytes: crawler.downloader.robotsMaxBytes,
      frontier,
      turnLeaseMs: config.timeoutMs,
      politeness: {
        minDelayMs: crawler.frontier.minDelayMs,
        delayMultiplier: crawler.frontier.delayMultiplier,
        recentResponses: crawler.frontier.recentResponses,
        maxBackoffMs: crawler.frontier.maxBackoffMs,
        allowDelayBelowMin: crawler.frontier.allowDelayBelowMin,
      },
      maxRedirects: crawler.downloader.maxRedirects,
    });
    this.renderer = new Renderer(this.pool, gate, config);
    this.patterns = config.urlPatterns.map(globToRegExp);
  }

  /** The browser starts with the service: a Chromium that cannot run stops it at boot, not at the first page. */
  async onModuleInit() {
    try {
      await this.pool.start();
    } catch (error) {
      throw new Error(`plugin render: Chromium ${this.ctx.config.chromiumPath} did not start (PLUGIN_RENDER_CHROMIUM_PATH): ${(error as Error).message}`);
    }
  }

  async onApplicationShutdown() {
    await this.pool.close();
  }

  async onFetched(fetched: PluginFetched, body: Buffer): Promise<void> {
    if (!this.wanted(fetched, body)) {
      await this.ctx.count('passed');
      return this.ctx.toParser(fetched);
    }
    let outcome;
    try {
      outcome = await this.renderer.render({ url: fetched.url, status: fetched.status, contentType: fetched.contentType, body });
    } catch (error) {
      if (!(error instanceof BrowserCrashedError)) throw error;
      return this.crashed(fetched, error);
    }
    for (const refusal of outcome.refused) await this.ctx.count(`refused.${refusal.reason}`);
    if (outcome.refused.length)
      this.ctx.logger.info(
        { event: 'render-refused', url: fetched.url, refused: outcome.refused.slice(0, 20) },
        `render of ${fetched.url}: ${outcome.refused.length} sub-requests refused`,
      );
    if (outcome.kind === 'timeout') {
      this.ctx.logger.warn(
        { event: 'render-timeout', url: fetched.url, timeoutMs: this.ctx.config.timeoutMs },
        `render of ${fetched.url} cut at ${this.ctx.config.timeoutMs} ms: the page goes on as fetched`,
      );
      await this.ctx.count('timeout');
      return this.ctx.toParser(fetched);
    }
    await this.ctx.count('subrequests', outcome.fetched);
    const rendered = Buffer.from(outcome.html, 'utf8');
    // A script can build a DOM far larger than any response the downloader would take: held to the same cap.
    if (rendered.length > this.ctx.crawler.downloader.maxBodyBytes) {
      this.ctx.logger.warn(
        { event: 'render-too-large', url: fetched.url, bytes: rendered.length, maxBytes: this.ctx.crawler.downloader.maxBodyBytes },
        `render of ${fetched.url} is larger than DOWNLOADER_MAX_BODY_BYTES: the page goes on as fetched`,
      );
      await this.ctx.count('too-large');
      return this.ctx.toParser(fetched);
    }
    await this.ctx.count('rendered');
    await this.ctx.toParser(fetched, { body: rendered, contentType: RENDERED_TYPE });
  }

  private wanted(fetched: PluginFetched, body: Buffer): boolean {
    const url = new URL(fetched.url);
    // A site's `render: true` sends every HTML page of it here (`false` keeps them from coming: the downloader's routing).
    if (siteRenderSetting(this.ctx.crawler, url.host) === true) return true;
    const path = url.pathname;
    if (this.patterns.some((re) => re.test(path))) return true;
    // latin1: the markers looked for are ASCII, whatever the page's charset.
    return this.ctx.config.detect && looksScriptBuilt(body.toString('latin1'));
  }

  /** A crash is retried (the job throws) a few times; then the page goes on as fetched, never lost. */
  private async crashed(fetched: PluginFetched, error: Error): Promise<void> {
    const key = `crashes:${fetched.fetchId}:${fetched.fetchedAt}`;
    const crashes = await this.ctx.state.incr(key);
    if (crashes === 1) await this.ctx.state.set(key, '1', CRASH_COUNT_TTL_MS);
    this.ctx.logger.warn({ event: 'render-crashed', url: fetched.url, crashes, error: error.message }, `render of ${fetched.url} crashed (${crashes})`);
    await this.ctx.count('crashed');
    if (crashes <= this.ctx.config.crashRetries) throw error;
    await this.ctx.count('crash-gave-up');
    await this.ctx.state.del(key);
    return this.ctx.toParser(fetched);
  }
}
