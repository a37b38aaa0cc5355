import { BeforeApplicationShutdown, Controller, Get, HttpException, HttpStatus, Inject } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { CONTENT_STORE, ContentStore } from '@crawler/content-store';
import { RECORDS_STORE, RecordsStore } from '@crawler/records';
import { STATE_STORE, StateStore } from '@crawler/state';
import { describeRedisMemory, RedisMemoryGauge } from './redis-memory.service';
import { SERVICE_NAME } from './runtime.tokens';

/** Longest a readiness check waits for one dependency: under a Kubernetes probe's timeout, well over a healthy answer. */
export const HEALTH_CHECK_TIMEOUT_MS = 2000;

export interface ReadinessBody {
  service: string;
  status: 'ok' | 'unavailable' | 'draining';
  /** Each dependency by what it is (`redis` or `memory`, `s3` or `fs`, and `postgresql` with RECORDS_URL): `ok`, or why it failed. */
  checks: Record<string, string>;
  /** The dependencies that failed (empty when ready). */
  failing: string[];
}

/**
 * GET /health/live: the process is up and serving HTTP, nothing else is checked (restart it only when this
 * fails). GET /health/ready, and GET /health as before: the state store (Redis), the content store (S3)
 * and the records' PostgreSQL (with RECORDS_URL) answer within HEALTH_CHECK_TIMEOUT_MS, and Redis is not at
 * its memory limit (REDIS_MEMORY_HIGH_WATER); otherwise 503 naming the failing dependency. A service that is
 * shutting down (draining its jobs) is no longer ready.
 */
@Controller('health')
export class HealthController implements BeforeApplicationShutdown {
  private draining = false;

  constructor(
    @Inject(SERVICE_NAME) private readonly service: string,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
    @Inject(STATE_STORE) private readonly state: StateStore,
    @Inject(CONTENT_STORE) private readonly content: ContentStore,
    @Inject(RECORDS_STORE) private readonly records: RecordsStore,
    private readonly redisMemory: RedisMemoryGauge,
  ) {}

  /** Redis answers, and is not at its memory limit (where it answers, but refuses the writes every service needs). */
  private async redisReady(): Promise<void> {
    await this.state.get('health');
    const memory = await this.redisMemory.read();
    if (memory?.full) throw new Error(describeRedisMemory(memory));
  }

  @Get('live')
  live() {
    return { service: this.service, status: 'ok', uptimeSeconds: Math.round(process.uptime()) };
  }

  @Get()
  health(): Promise<ReadinessBody> {
    return this.ready();
  }

  @Get('ready')
  async ready(): Promise<ReadinessBody> {
    const dependencies: [string, () => Promise<unknown>][] = [
      [this.config.redisUrl ? 'redis' : 'memory', () => this.redisReady()],
      [this.config.s3Url ? 's3' : 'fs', () => this.content.ping()],
      // The records' own server (RECORDS_URL); in Redis or memory they are checked with the state store.
      ...(this.records.ping ? [['postgresql', () => this.records.ping!()] as [string, () => Promise<unknown>]] : []),
    ];
    // In the dependencies' order, whichever answers first.
    const results = await Promise.all(dependencies.map(([, check]) => probe(check)));
    const checks: Record<string, string> = Object.fromEntries(dependencies.map(([name], i) => [name, results[i]]));
    const failing = Object.keys(checks).filter((name) => checks[name] !== 'ok');
    const status = this.draining ? 'draining' : failing.length ? 'unavailable' : 'ok';
    const body: ReadinessBody = { service: this.service, status, checks, failing };
    if (status !== 'ok') throw new HttpException(body, HttpStatus.SERVICE_UNAVAILABLE);
    return body;
  }

  beforeApplicationShutdown() {
    this.draining = true;
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
