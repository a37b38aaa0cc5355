import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadConfig } from '@crawler/config';
import { ContentParserModule } from '@crawler/content-parser';
import { ContentSeenModule } from '@crawler/content-seen';
import { ControlPlaneModule, CrawlControlService } from '@crawler/control-plane';
import { DnsResolverModule } from '@crawler/dns-resolver';
import { DownloaderModule } from '@crawler/downloader';
import { FrontierModule } from '@crawler/frontier';
import { definePlugin, PluginContext, PluginHandler, PluginPage, pluginModule } from '@crawler/plugin-sdk';
import { QUEUE_TRANSPORT, QueueTransport } from '@crawler/queue';
import { CompletionProbe } from '@crawler/crawl-state';
import { CrawlStats, RuntimeModule } from '@crawler/runtime';
import { UrlExtractorModule } from '@crawler/url-extractor';
import { UrlFilterModule } from '@crawler/url-filter';
import { UrlSeenModule } from '@crawler/url-seen';
import { pluginEventsQueue } from '@crawler/contracts';
import { createLogger } from '@crawler/logging';
import { RUSSIAN_TEXT } from '../web/html';
import { TestWeb } from '../web/test-web';

/**
 * The parsed-page hook, end to end, with the example a plugin author would write: a "words" plugin that
 * reads every new page's text and emits an event for pages mentioning a word. It runs next to every core
 * module of the pipeline, crawling the test web; no core code knows it exists (PLUGINS names it, its
 * module registers it).
 */
const pages: { page: PluginPage; text: string }[] = [];

@Injectable()
class WordsHandler implements PluginHandler {
  constructor(private readonly ctx: PluginContext<{ word: string }>) {}

  async onPage(page: PluginPage) {
    const { text } = await this.ctx.pageText(page);
    pages.push({ page, text });
    if (text.includes(this.ctx.config.word)) await this.ctx.emit('mention', { word: this.ctx.config.word, title: page.title ?? '' }, page.url);
    await this.ctx.count('pages');
  }
}

const words = definePlugin<{ word: string }>({ name: 'words', pageHook: true, handler: WordsHandler });

describe('a plugin with a parsed-page hook, next to the whole pipeline', () => {
  let web: TestWeb;
  let dataDir: string;
  let totals: Record<string, number>;
  let events: number;

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 12 });
    dataDir = mkdtempSync(join(tmpdir(), 'page-hook-'));
    const config = loadConfig(
      {},
      {
        dataDir,
        logLevel: 'silent',
        'plugins.enabled': ['words'],
        'filter.scope': 'any',
        'filter.maxDepth': 1000,
        'frontier.minDelayMs': 0,
        // The test web's /error pages answer 500 every time: asked once, not held for retries (ASK_ONCE_ENV).
        'frontier.transientAttempts': 1,
        'dns.allowPrivate': true,
        'dns.hosts': Object.fromEntries([...web.hostNames].map((h) => [h, '127.0.0.1'])),
        'downloader.robotsErrorTtlMs': 300,
        'downloader.robotsUnreachableMaxMs': 1500,
      },
    );
    const logger = createLogger({ level: config.logLevel, service: 'crawl' });
    @Module({
      imports: [
        RuntimeModule.forRoot({ service: 'crawl', config, logger }),
        FrontierModule,
        DnsResolverModule,
        DownloaderModule,
        ContentParserModule,
        ContentSeenModule,
        UrlExtractorModule,
        UrlFilterModule,
        UrlSeenModule,
        ControlPlaneModule,
        pluginModule(words, { word: 'Съешь' }),
      ],
    })
    class CrawlWithPluginModule {}
    const app = await NestFactory.createApplicationContext(CrawlWithPluginModule, { logger: false });
    await app.init();
    try {
      await app.get(CrawlControlService).submitSeeds(web.seeds());
      expect(await app.get(CompletionProbe).waitForCompletion()).toBe(true);
      totals = await app.get(CrawlStats).totals();
      events = (await app.get<QueueTransport>(QUEUE_TRANSPORT).counts(pluginEventsQueue('words'))).waiting;
    } finally {
      await app.close();
    }
  }, 120_000);

  afterAll(async () => {
    await web?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('gets every stored page once, and no duplicate', () => {
    expect(totals.stored).toBeGreaterThan(20);
    expect(pages).toHaveLength(totals.stored);
    expect(totals['plugin.words.pages']).toBe(totals.stored);
    const urls = pages.map((p) => p.page.url);
    expect(new Set(urls).size).toBe(urls.length);
    for (const group of web.expected.duplicates) expect(group.filter((u) => urls.includes(u))).toHaveLength(1);
  });

  it('reads each page’s text from storage, decoded in the charset the parser found', () => {
    expect(pages.every((p) => p.text.length > 0 && /^[0-9a-f]{64}$/.test(p.page.contentHash))).toBe(true);
    const cp1251 = pages.find((p) => p.page.url === web.expected.charsetPage.url)!;
    expect(cp1251.page.charset).toBe('windows-1251');
    expect(cp1251.text).toContain(RUSSIAN_TEXT);
  });

  it('emits its events to plugin-events.<name>, and the crawl still completes (events are output, not work)', () => {
    expect(events).toBe(pages.filter((p) => p.text.includes('Съешь')).length);
    expect(events).toBe(1);
    expect(Object.keys(totals).filter((k) => k.startsWith('failed.'))).toEqual([]);
  });
});
