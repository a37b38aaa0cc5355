import { PluginPage, pluginEventsQueue, SCHEMA_VERSION } from '@crawler/contracts';
import type { CrawlerConfig } from '@crawler/config';
import type { ContentStore, PageStore } from '@crawler/content-store';
import { decodeHtml, parseHtmlPage } from '@crawler/html';
import type { Logger } from '@crawler/logging';
import type { CrawlStats, Pipeline } from '@crawler/runtime';
import type { StateStore } from '@crawler/state';
import type { Registry } from 'prom-client';

/** A stored page's text, as the parser saw it. */
export interface PageText {
  title?: string;
  lang?: string;
  /** Visible text, whitespace-collapsed (no script, style, title). */
  text: string;
}

/**
 * What a plugin gets from the crawler: the same configuration, storage, queues and metrics as a core
 * service, each scoped to the plugin. Inject it into the handler (`constructor(private readonly ctx: PluginContext<MyConfig>)`).
 */
export class PluginContext<C = Record<string, never>> {
  /** The plugin's own state: keys under `<prefix>:plugin-<name>:` in Redis (or memory, embedded). */
  readonly state: StateStore;
  /** Structured logs, every line with `plugin: <name>`. */
  readonly logger: Logger;

  constructor(
    /** The plugin's name. */
    readonly name: string,
    /** The plugin's validated settings (PLUGIN_<NAME>_…). */
    readonly config: C,
    /** The crawler's settings (CRAWLER_PREFIX, CRAWLER_DATA_DIR, DOWNLOADER_…): read-only. */
    readonly crawler: CrawlerConfig,
    state: StateStore,
    /** The content store (S3 or the embedded run's directory). Keep your objects under a prefix of your own. */
    readonly content: ContentStore,
    /** The stored pages (what a page hook's `contentKey` names). */
    readonly pages: PageStore,
    /** The process's Prometheus registry (served on /metrics): register your own metrics on it. */
    readonly metrics: Registry,
    /** The queue transport, for sending to any queue of the contracts (e.g. URLs to `filter-urls`). */
    readonly pipeline: Pipeline,
    private readonly stats: CrawlStats,
    logger: Logger,
  ) {
    this.state = state.namespace(`plugin-${name}`);
    this.logger = logger.child({ plugin: name });
  }

  /** Counts an event in the crawl totals and `crawler_events_total`, as `plugin.<name>.<event>`. */
  count(event: string, by = 1): Promise<void> {
    return this.stats.count(`plugin.${this.name}.${event}`, by);
  }

  /** Sends an event (an alert, a finding) to `plugin-events.<name>`, for whatever consumes it. */
  emit(type: string, data: Record<string, unknown>, url?: string): Promise<void> {
    return this.pipeline.send(pluginEventsQueue(this.name), {
      v: SCHEMA_VERSION,
      plugin: this.name,
      type,
      at: new Date().toISOString(),
      ...(url === undefined ? {} : { url }),
      data,
    });
  }

  /** The text of a page a page hook was sent, read from the page store and parsed again. */
  async pageText(page: PluginPage): Promise<PageText> {
    const stored = await this.pages.read(page.contentKey);
    if (!stored) throw new Error(`stored page ${page.contentKey} of ${page.url} is missing`);
    const decoded = decodeHtml(stored.body, `${page.contentType.split(';')[0] || 'text/html'}; charset=${page.charset}`);
    const html = parseHtmlPage(decoded.text, { maxLinks: 0 });
    return { title: html.title, lang: html.lang, text: html.text };
  }
}
