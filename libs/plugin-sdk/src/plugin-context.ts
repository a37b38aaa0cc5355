import { FetchedPage, PluginFetched, PluginPage, pluginEventsQueue, QueueName, SCHEMA_VERSION } from '@crawler/contracts';
import type { CrawlerConfig } from '@crawler/config';
import type { BodyStaging, ContentStore, PageStore } from '@crawler/content-store';
import { decodeHtml, parseHtmlPage } from '@crawler/html';
import type { Logger } from '@crawler/logging';
import type { CrawlStats, Pipeline } from '@crawler/runtime';
import { CachedResolver, DNS_CACHE_NAMESPACE } from '@crawler/net';
import { ROBOTS_NAMESPACE, RobotsCache } from '@crawler/robots';
import { hashBucketsFor, PartitionedHash, type StateStore } from '@crawler/state';
import type { Registry } from 'prom-client';

/** A stored page's text, as the parser saw it. */
export interface PageText {
  title?: string;
  lang?: string;
  /** Visible text, whitespace-collapsed (no script, style, title). */
  text: string;
}

/** A body of the plugin's own for a page it hands on to the parser (PluginContext.toParser). */
export interface ReplacedBody {
  body: Buffer;
  /** Its media type with charset (`text/html; charset=utf-8`): the parser decodes it by this. */
  contentType: string;
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
  /**
   * The crawl's robots.txt answers, per scheme+host+port, as the downloader cached them: a plugin that makes
   * requests of its own reads a site's rules here before fetching them, and puts what it fetched for the crawl.
   */
  readonly robots: RobotsCache;
  private dns?: CachedResolver;
  private readonly dnsCache: StateStore;
  /** Staged bodies handed on to the parser as fetched: the host must not release them (see toParser). */
  private readonly handedOn = new Set<string>();

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
    /** Where fetched bodies wait between stages (toParser stages a replaced body there). */
    private readonly staging: BodyStaging,
  ) {
    this.state = state.namespace(`plugin-${name}`);
    this.robots = new RobotsCache(state.namespace(ROBOTS_NAMESPACE));
    this.logger = logger.child({ plugin: name });
    this.dnsCache = state.namespace(DNS_CACHE_NAMESPACE);
  }

  /**
   * The crawl's resolver: the same hosts maps, shared cache (what the DNS resolver service looked up is
   * answered from it, and what this one looks up is put there), DNS servers and address rules as the DNS
   * resolver service; its events are counted as `plugin.<name>.dns.<event>`. For a plugin that connects
   * anywhere itself: connect to the address it answers, never to a second lookup's.
   */
  get resolver(): CachedResolver {
    this.dns ??= new CachedResolver(this.dnsCache, this.crawler.dns, {
      count: (event) => this.count(`dns.${event}`),
      lookup: () => undefined,
      refresh: () => undefined,
      warn: (fields) => this.logger.warn(fields),
    });
    return this.dns;
  }

  /**
   * A hash of the plugin's state that grows with the crawl (a field per URL, image or page): partitioned
   * over a Redis Cluster's masters, the plain hash `name` on one node or in memory.
   */
  hash(name: string): PartitionedHash {
    return new PartitionedHash(this.state, name, hashBucketsFor(this.crawler.redisUrl));
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

  /**
   * Hands a page the plugin took before the parser (`claims.pages`) on to the parser: as fetched, or with a
   * body of the plugin's own (staged here; the page then records `via: <plugin>`). Call it at most once per
   * job, as the handler's last step: the page is then the pipeline's again, whatever the plugin does after.
   */
  async toParser(fetched: PluginFetched, replaced?: ReplacedBody): Promise<void> {
    const { hook: _hook, source: _source, ...page } = fetched;
    let next: FetchedPage = page;
    if (replaced) {
      const bodyKey = await this.staging.stage(replaced.body);
      const headers = Object.fromEntries(Object.entries(page.headers).filter(([name]) => !/^content-(type|length|encoding)$/i.test(name)));
      next = {
        ...page,
        bodyKey,
        contentType: replaced.contentType,
        headers: { ...headers, 'content-type': replaced.contentType },
        length: replaced.body.length,
        truncated: false,
        via: this.name,
      };
    } else {
      this.handedOn.add(page.bodyKey);
    }
    await this.pipeline.send(QueueName.Parse, next);
  }

  /** Whether toParser handed this staged body on as fetched (the parser releases it, not the host); forgets it. */
  takeHandedOn(bodyKey: string): boolean {
    return this.handedOn.delete(bodyKey);
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
