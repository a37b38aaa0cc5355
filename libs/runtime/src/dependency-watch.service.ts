import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { storesUsedBy } from '@crawler/contracts';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { CONTENT_STORE, ContentStore } from '@crawler/content-store';
import { LOGGER, Logger } from '@crawler/logging';
import { RECORDS_STORE, RecordsStore } from '@crawler/records';
import { STATE_STORE, StateStore } from '@crawler/state';
import { OutageLog } from './outage-log';
import { describeRedisMemory, RedisMemoryGauge } from './redis-memory.service';
import { SERVICE_NAME } from './runtime.tokens';

/** Longest one check of a dependency waits for its answer: under a Kubernetes probe's timeout, well over a healthy answer. */
export const HEALTH_CHECK_TIMEOUT_MS = 2000;

/** A dependency that failed its last check, since its first failed check in a row. */
export interface DependencyOutage {
  /** `redis`, `s3`, `postgresql` (or the embedded drivers' `memory`, `fs`). */
  dependency: string;
  since: string;
  /** What its last check answered. */
  error: string;
}

interface Dependency {
  name: string;
  check: () => Promise<unknown>;
}

/**
 * What this process knows of the stores it uses (Redis always; S3 and the records' PostgreSQL when the
 * services it runs use them: see the service map's `uses`): each is checked every HEALTH_WATCH_MS and on
 * every readiness probe, within HEALTH_CHECK_TIMEOUT_MS. An outage is logged once when it starts, reminded
 * at most every OUTAGE_LOG_REMINDER_MS, and logged once when it ends; meanwhile `outages()` says what is
 * down since when, without waiting on it.
 */
@Injectable()
export class DependencyWatch implements OnApplicationBootstrap, BeforeApplicationShutdown {
  readonly dependencies: readonly Dependency[];
  private readonly log: OutageLog;
  private readonly failing = new Map<string, string>();
  private checking?: Promise<Record<string, string>>;
  private timer?: NodeJS.Timeout;

  constructor(
    @Inject(SERVICE_NAME) service: string,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
    @Inject(STATE_STORE) private readonly state: StateStore,
    @Inject(CONTENT_STORE) content: ContentStore,
    @Inject(RECORDS_STORE) records: RecordsStore,
    private readonly redisMemory: RedisMemoryGauge,
    @Inject(LOGGER) logger: Logger,
  ) {
    const uses = storesUsedBy(service);
    this.dependencies = [
      { name: config.redisUrl ? 'redis' : 'memory', check: () => this.redisReady() },
      ...(uses.has('content') ? [{ name: config.s3Url ? 's3' : 'fs', check: () => content.ping() }] : []),
      // The records' own server (RECORDS_URL); in Redis or memory they are checked with the state store.
      ...(uses.has('records') && records.ping ? [{ name: 'postgresql', check: () => records.ping!() }] : []),
    ];
    this.log = new OutageLog(logger, config.outageLogReminderMs);
  }

  onApplicationBootstrap() {
    this.timer = setInterval(() => void this.check(), this.config.healthWatchMs);
    this.timer.unref();
  }

  /** Before the stores close, so that no check runs into a closed one. */
  async beforeApplicationShutdown() {
    clearInterval(this.timer);
    await this.checking;
  }

  /** Checks every dependency now (callers meanwhile share the check under way): each one's `ok`, or why it failed. */
  check(): Promise<Record<string, string>> {
    this.checking ??= this.checkAll().finally(() => (this.checking = undefined));
    return this.checking;
  }

  /** The dependencies whose last check failed, from what is known now (nothing is waited on). */
  outages(): DependencyOutage[] {
    return [...this.failing].map(([dependency, error]) => ({ dependency, since: new Date(this.log.since(dependency)!).toISOString(), error }));
  }

  private async checkAll(): Promise<Record<string, string>> {
    // In the dependencies' order, whichever answers first. An outage dates from the check that found it, not
    // from when that check gave up.
    const started = Date.now();
    const results = await Promise.all(this.dependencies.map((d) => probe(d.check)));
    const checks: Record<string, string> = {};
    this.dependencies.forEach(({ name }, i) => {
      const result = results[i];
      checks[name] = result;
      if (result === 'ok') {
        this.failing.delete(name);
        this.log.up(name, {}, `${name} is back`);
      } else {
        this.failing.set(name, result);
        this.log.down(name, { error: result }, `${name} unavailable: ${result}`, started);
      }
    });
    return checks;
  }

  /** Redis answers, and is not at its memory limit (where it answers, but refuses the writes every service needs). */
  private async redisReady(): Promise<void> {
    await this.state.get('health');
    const memory = await this.redisMemory.read();
    if (memory?.full) throw new Error(describeRedisMemory(memory));
  }
}

/** 'ok', or the reason the check failed (its error, or that it did not answer in time). */
async function probe(check: () => Promise<unknown>): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${HEALTH_CHECK_TIMEOUT_MS} ms`), HEALTH_CHECK_TIMEOUT_MS);
  });
  try {
    return await Promise.race([
      check().then(
        () => 'ok',
        (error: Error) => error?.message || String(error),
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
