import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DynamicModule, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { SingleBar } from 'cli-progress';
import { ConfigError, CrawlerConfig, loadConfig } from '@crawler/config';
import { CrawlControlService, parseSeedList, SeedError } from '@crawler/control-plane';
import { FetchRoutes, insecureWarning } from '@crawler/downloader';
import { FrontierService } from '@crawler/frontier';
import { FRONTIER_STORE, FrontierStore } from '@crawler/frontier-store';
import { infrastructureCause, isRedisOutOfMemory } from '@crawler/queue';
import { createProcessLogger, Logger, NestPinoLogger } from '@crawler/logging';
import { loadPlugins } from '@crawler/plugin-sdk';
import { CompletionProbe, CrawlClock, CrawlStateModule, describeWaiting, FailedUrls, HostsAside, PipelineSnapshot, UnreachedHostsRegistry } from '@crawler/crawl-state';
import { RedisStateStore } from '@crawler/state';
import { checkRecords, checkRedis, surviveUnawaitedRedisErrors, CrawlStats, RuntimeModule, stopWithin } from '@crawler/runtime';
import { checkUrlSeenRoom, describeSeenStats, UrlSeenService } from '@crawler/url-seen';
import { loadUserRules } from '@crawler/url';
import { configOverrides, CrawlOptions } from './crawl-options';
import { exitCodeOf, formatSummary, isComplete, notFetched, StopReason, summarize, whyNothingFetched } from './crawl-summary';
import { RobotsIdleWait } from './robots-idle-wait';
import { serviceModules } from './service-modules';

/** How often seeds Redis refused (down, or out of memory) are offered again. */
const SEEDS_RETRY_MS = 1000;

export async function runEmbeddedCrawl(options: CrawlOptions): Promise<number> {
  const started = performance.now();
  let config;
  let plugins;
  try {
    config = loadConfig(process.env, { ...configOverrides(options), fetchLogFile: join(options.out, 'fetch-log.jsonl') });
    // The plugins PLUGINS (--plugins) names, found by name (libs/plugin-<name>), their settings validated.
    plugins = loadPlugins(config.plugins.enabled);
    // The URL filter refuses bad rules at init too; checked here, a bad rule stops the crawl before anything starts.
    const ruleProblems: string[] = [];
    loadUserRules(config.filter, (path) => readFileSync(path, 'utf8'), ruleProblems);
    if (ruleProblems.length) throw new ConfigError(ruleProblems);
    // Proxy credentials and certificate files, read as the downloader will: a missing one stops the crawl here.
    const routes = FetchRoutes.load(config);
    // Said on the terminal as well as in the log file: nobody reads crawl.log before a crawl starts.
    if (routes.insecureSites.length) process.stderr.write(`crawl: WARNING: ${insecureWarning(routes.insecureSites)}\n`);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`crawl: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  if (config.redisUrl) {
    let refused: Error | undefined;
    let checked = false;
    const refuse = (error: Error) => {
      refused = error;
      if (!checked) return;
      // Redis answered only once the crawl had started: stop it as the services stop.
      process.stderr.write(`crawl: refusing to go on: ${error.message}\n`);
      process.exit(2);
    };
    await checkRedis(config.redisUrl, config.redisStartupWaitMs, refuse);
    checked = true;
    if (refused) {
      process.stderr.write(`crawl: refusing to start: ${(refused as Error).message}\n`);
      return 2;
    }
  }
  if (config.crawl.maxTimeMs > 0 && config.frontier.maxTimeMs === 0) {
    // --max-time is this run's: the frontier stops dispatching then and the run ends once the pages in flight are
    // done, instead of being cut off mid-page. A clock kept in Redis by an earlier run is not this run's.
    config.frontier.maxTimeMs = config.crawl.maxTimeMs;
    if (config.redisUrl) {
      const state = new RedisStateStore({ url: config.redisUrl, prefix: config.prefix });
      await CrawlClock.forget(state).finally(() => state.close());
    }
  }
  const startRefused = (await checkRecords(config, (line) => process.stderr.write(`crawl: ${line}\n`))) ?? (await checkUrlSeenRoom(config));
  if (startRefused) {
    process.stderr.write(`crawl: refusing to start: ${startRefused.message}\n`);
    return 2;
  }
  const seeds = [...options.seeds];
  if (options.seedsFile) {
    for (const seed of parseSeedList(readFileSync(options.seedsFile, 'utf8'))) seeds.push(seed.ok ? seed.url : seed.input);
  }
  mkdirSync(options.out, { recursive: true });
  // One logger for every service of the crawl, to a file: the terminal keeps its progress bar.
  const logger = createProcessLogger({ level: config.logLevel, service: 'crawl', file: join(options.out, 'crawl.log') });
  // Logged where the crawl's other lines are (the exit writes it out); main prints it on stderr.
  return crawlInOneProcess({ options, config, plugins, seeds, logger, started }).catch((error) => {
    logger.fatal({ err: error }, 'crawl failed');
    throw error;
  });
}

interface CrawlSetup {
  options: CrawlOptions;
  config: CrawlerConfig;
  plugins: DynamicModule[];
  seeds: string[];
  logger: Logger;
  started: number;
}

async function crawlInOneProcess({ options, config, plugins, seeds, logger, started }: CrawlSetup): Promise<number> {
  @Module({ imports: [RuntimeModule.forRoot({ service: 'crawl', config, logger }), CrawlStateModule, ...serviceModules(), ...plugins] })
  class EmbeddedCrawlModule {}

  surviveUnawaitedRedisErrors(logger);
  // abortOnError: false: Nest's process.abort() on a failed start would end the process before its log is written out.
  const app = await NestFactory.createApplicationContext(EmbeddedCrawlModule, { logger: new NestPinoLogger(logger), abortOnError: false });
  // Ctrl-C or SIGTERM ends the wait below: the summary of what was done is written, then everything closes.
  const interruption = new AbortController();
  let interrupted: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    interrupted ??= signal;
    interruption.abort();
    stopWithin({
      timeoutMs: config.shutdownTimeoutMs,
      who: 'crawl',
      exitCode: signal === 'SIGINT' ? 130 : 143,
      say: (line) => (logger.error(line), process.stderr.write(`\n${line}\n`)),
    });
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const bar = process.stderr.isTTY && !options.json ? progressBar() : undefined;
  let waitingLine = '';
  const sayWaiting = (line: string) => {
    if (line && line !== waitingLine) process.stderr.write(`${bar ? '\n' : ''}${line}\n`);
    waitingLine = line;
  };
  // --max-time: the frontier stops dispatching (FRONTIER_MAX_TIME_MS) and the run ends as its pages in flight
  // are done. Should that take longer than SHUTDOWN_TIMEOUT_MS more, the wait ends as on a signal; either way
  // the summary says so and the exit code is the budget's.
  let timedOut = false;
  const timeLimit =
    config.crawl.maxTimeMs > 0
      ? setTimeout(() => {
          timedOut = true;
          interruption.abort();
          stopWithin({ timeoutMs: config.shutdownTimeoutMs, who: 'crawl', exitCode: 4, say: (line) => (logger.error(line), process.stderr.write(`\n${line}\n`)) });
        }, config.crawl.maxTimeMs + config.shutdownTimeoutMs)
      : undefined;
  const control = app.get(CrawlControlService);
  for (;;) {
    try {
      await control.submitSeeds(seeds);
      break;
    } catch (error) {
      // Redis down, or full (it refuses writes): the seeds wait for it, as all other work does.
      if (!(error instanceof SeedError) && infrastructureCause(error) !== null && !interruption.signal.aborted) {
        sayWaiting(`crawl: waiting: ${describeOutage(error)}`);
        await new Promise((r) => setTimeout(r, SEEDS_RETRY_MS));
        continue;
      }
      await app.close();
      if (error instanceof SeedError) {
        process.stderr.write(`crawl: ${error.message}\n`);
        return 2;
      }
      throw error;
    }
  }

  const stats = app.get(CrawlStats);
  bar?.start(seeds.length, 0, { pending: 0, stored: 0, errors: 0 });
  // In-process queues count exactly at any instant: the end can be seen sooner than across processes.
  const inProcess = !config.redisUrl;
  let last: PipelineSnapshot | undefined;
  const robotsIdle = new RobotsIdleWait(app.get(FrontierService), config.crawl.robotsIdleWaitMs, logger);
  await app.get(CompletionProbe).waitForCompletion({
    pollMs: inProcess ? 50 : 200,
    settleMs: inProcess ? 50 : 250,
    signal: interruption.signal,
    onTick: (snapshot) => {
      last = snapshot;
      robotsIdle.tick(snapshot.waitingOnRobots);
      // Nothing happens until a broken robots.txt is tried again, or an outage ends: say so, or the run looks stuck.
      const outage = Object.keys(snapshot.outageRetries).length || snapshot.redisMemory?.full ? snapshot.waitingOn : null;
      const line = snapshot.waitingOnRobots
        ? `crawl: ${describeWaiting(snapshot.waitingOnRobots)}${robotsIdle.describeGiveUp()}`
        : outage
          ? `crawl: waiting: ${outage.replace(/ since \S+/g, '')}`
          : '';
      sayWaiting(line);
      if (!bar) return;
      void stats.totals().then(
        (t) => {
          const fetched = t.fetched ?? 0;
          bar.setTotal(Math.max(fetched + snapshot.pending, 1));
          bar.update(fetched, { pending: snapshot.pending, stored: t.stored ?? 0, errors: summarize(t, 0).errors });
        },
        // Redis unreadable for a moment: the next tick updates the bar.
        () => undefined,
      );
    },
    onOutage: (error) => sayWaiting(`crawl: waiting: ${describeOutage(error)}`),
  });
  bar?.stop();
  clearTimeout(timeLimit);
  const totals = await stats.totals();
  const frontierStore = app.get<FrontierStore>(FRONTIER_STORE);
  const inFrontier = await frontierStore.stats();
  const left = inFrontier.size + inFrontier.scheduled;
  // The frontier's limit with nothing left undone is a crawl that finished in time.
  const timeUp = timedOut || ((totals['frontier.time-limit'] ?? 0) > 0 && left > 0);
  const spent = (key: string) => (totals[key] ?? 0) > 0 && left > 0;
  const stopped: StopReason = interrupted
    ? 'interrupted'
    : timeUp
      ? 'time-limit'
      : spent('frontier.budget-spent')
        ? 'budget'
        : spent('frontier.byte-budget-spent')
          ? 'byte-budget'
          : 'finished';
  const summary = summarize(totals, (performance.now() - started) / 1000, stopped);
  summary.left = left;
  summary.urlSeen = describeSeenStats(await app.get(UrlSeenService).stats());
  summary.hostsSetAside = await app.get(HostsAside).listSetAside();
  // A backed-off host's URLs were counted when it was backed off; more may have arrived since.
  for (const host of summary.hostsSetAside) if (host.reason === 'timeouts') host.urls = (await frontierStore.hostInfo(host.host)).queued;
  const unreached = app.get(UnreachedHostsRegistry);
  const failed = await app.get(FailedUrls).list(config.frontier.failedUrlsKept);
  if (failed.urls.length) summary.failedUrls = failed.urls;
  summary.notFetched = notFetched(
    {
      refused: await unreached.read('address-refused'),
      dnsFailed: await unreached.read('dns-failed'),
      setAside: summary.hostsSetAside,
      failedUrls: failed.urls,
      stopped: {
        reason: stopped,
        left,
        held: inFrontier.scheduled,
        maxPages: config.frontier.maxPages,
        maxBytes: config.frontier.maxBytes,
        maxTimeMs: config.crawl.maxTimeMs,
      },
    },
    totals,
  );
  if (interrupted) summary.interrupted = interrupted;
  if (!interrupted && last && Object.keys(last.failed).length) {
    summary.failed = last.failed;
    summary.waitingOn = last.waitingOn ?? undefined;
  }
  summary.complete = isComplete(summary);
  await app.close();
  writeFileSync(join(options.out, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  process.stdout.write(options.json ? `${JSON.stringify(summary)}\n` : `${formatSummary(summary)}\n  results in ${options.out}\n`);
  const code = exitCodeOf(summary);
  if (code === 3) process.stderr.write(`crawl: nothing was fetched. ${whyNothingFetched(summary)}\n`);
  return code;
}

/** What the crawl waits for when Redis cannot be read or refuses writes. */
function describeOutage(error: unknown): string {
  if (isRedisOutOfMemory(error)) return 'Redis is out of memory (OOM command not allowed): free memory or raise its maxmemory; the crawl resumes by itself';
  const cause = infrastructureCause(error);
  return `${cause === 'redis' ? 'Redis' : cause} unavailable (${error instanceof Error ? error.message : String(error)}): the crawl resumes when it is back`;
}

function progressBar(): SingleBar {
  return new SingleBar({
    format: 'crawling [{bar}] {value} fetched · {pending} queued jobs · {stored} stored · {errors} errors',
    hideCursor: true,
    stream: process.stderr,
  });
}
