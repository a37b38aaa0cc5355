import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { SingleBar } from 'cli-progress';
import { ConfigError, loadConfig } from '@crawler/config';
import { ContentParserModule } from '@crawler/content-parser';
import { ContentSeenModule } from '@crawler/content-seen';
import { ControlPlaneModule, CrawlControlService, parseSeedList, SeedError } from '@crawler/control-plane';
import { DnsResolverModule } from '@crawler/dns-resolver';
import { DownloaderModule } from '@crawler/downloader';
import { FrontierModule } from '@crawler/frontier';
import { createLogger, NestPinoLogger } from '@crawler/logging';
import { loadPlugins } from '@crawler/plugin-sdk';
import { CompletionProbe, CrawlStats, RuntimeModule } from '@crawler/runtime';
import { UrlExtractorModule } from '@crawler/url-extractor';
import { UrlFilterModule } from '@crawler/url-filter';
import { describeSeenStats, UrlSeenModule, UrlSeenService } from '@crawler/url-seen';
import { configOverrides, CrawlOptions } from './crawl-options';
import { formatSummary, summarize } from './crawl-summary';

/** Every stage of the pipeline, as the distributed services run them, in this one process. */
const SERVICE_MODULES = [
  FrontierModule,
  DnsResolverModule,
  DownloaderModule,
  ContentParserModule,
  ContentSeenModule,
  UrlExtractorModule,
  UrlFilterModule,
  UrlSeenModule,
  ControlPlaneModule,
];

export async function runEmbeddedCrawl(options: CrawlOptions): Promise<number> {
  const started = performance.now();
  let config;
  let plugins;
  try {
    config = loadConfig(process.env, { ...configOverrides(options), fetchLogFile: join(options.out, 'fetch-log.jsonl') });
    // The plugins PLUGINS (--plugins) names, found by name (libs/plugin-<name>), their settings validated.
    plugins = loadPlugins(config.plugins.enabled);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`crawl: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  const seeds = [...options.seeds];
  if (options.seedsFile) {
    for (const seed of parseSeedList(readFileSync(options.seedsFile, 'utf8'))) seeds.push(seed.ok ? seed.url : seed.input);
  }
  mkdirSync(options.out, { recursive: true });
  const logFile = join(options.out, 'crawl.log');

  @Module({ imports: [RuntimeModule.forRoot({ service: 'crawl', config, logFile }), ...SERVICE_MODULES, ...plugins] })
  class EmbeddedCrawlModule {}

  const logger = createLogger({ level: config.logLevel, service: 'crawl', file: logFile });
  const app = await NestFactory.createApplicationContext(EmbeddedCrawlModule, { logger: new NestPinoLogger(logger) });
  app.enableShutdownHooks();
  const control = app.get(CrawlControlService);
  try {
    await control.submitSeeds(seeds);
  } catch (error) {
    await app.close();
    if (error instanceof SeedError) {
      process.stderr.write(`crawl: ${error.message}\n`);
      return 2;
    }
    throw error;
  }

  const stats = app.get(CrawlStats);
  const bar = process.stderr.isTTY && !options.json ? progressBar() : undefined;
  bar?.start(seeds.length, 0, { pending: 0, stored: 0, errors: 0 });
  // In-process queues count exactly at any instant: the end can be seen sooner than across processes.
  const inProcess = !config.redisUrl;
  const complete = await app.get(CompletionProbe).waitForCompletion({
    pollMs: inProcess ? 50 : 200,
    settleMs: inProcess ? 50 : 250,
    onTick: (snapshot) => {
      if (!bar) return;
      void stats.totals().then((t) => {
        const fetched = t.fetched ?? 0;
        bar.setTotal(Math.max(fetched + snapshot.pending, 1));
        bar.update(fetched, { pending: snapshot.pending, stored: t.stored ?? 0, errors: summarize(t, 0, false).errors });
      });
    },
  });
  bar?.stop();
  const summary = summarize(await stats.totals(), (performance.now() - started) / 1000, complete);
  summary.urlSeen = describeSeenStats(await app.get(UrlSeenService).stats());
  await app.close();
  writeFileSync(join(options.out, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  process.stdout.write(options.json ? `${JSON.stringify(summary)}\n` : `${formatSummary(summary)}\n  results in ${options.out}\n`);
  return 0;
}

function progressBar(): SingleBar {
  return new SingleBar({
    format: 'crawling [{bar}] {value} fetched · {pending} queued jobs · {stored} stored · {errors} errors',
    hideCursor: true,
    stream: process.stderr,
  });
}
