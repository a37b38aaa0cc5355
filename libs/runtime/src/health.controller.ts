import { BeforeApplicationShutdown, Controller, Get, HttpException, HttpStatus, Inject } from '@nestjs/common';
import { DependencyWatch } from './dependency-watch.service';
import { SERVICE_NAME, STAYS_READY } from './runtime.tokens';

export interface ReadinessBody {
  service: string;
  /** `degraded`: a dependency failed, and the process serves on (the control plane: still ready, HTTP 200). */
  status: 'ok' | 'degraded' | 'unavailable' | 'draining';
  /**
   * Each dependency the process uses by what it is (`redis` or `memory`; `s3` or `fs` and `postgresql` with
   * RECORDS_URL where its services use them): `ok`, or why it failed.
   */
  checks: Record<string, string>;
  /** The dependencies that failed (empty when ready). */
  failing: string[];
}

/**
 * GET /health/live: the process is up and serving HTTP, nothing else is checked (restart it only when this
 * fails: an outage of a store is waited out, never cured by a restart). GET /health/ready, and GET /health
 * as before: the stores this process uses (DependencyWatch) answer within HEALTH_CHECK_TIMEOUT_MS, and Redis
 * is not at its memory limit; otherwise 503 naming the failing dependency. The control plane (STAYS_READY)
 * answers 200 `degraded` instead, so it keeps serving its API and dashboard, which say what is down. A
 * service that is shutting down (draining its jobs) is no longer ready.
 */
@Controller('health')
export class HealthController implements BeforeApplicationShutdown {
  private draining = false;

  constructor(
    @Inject(SERVICE_NAME) private readonly service: string,
    private readonly watch: DependencyWatch,
    @Inject(STAYS_READY) private readonly staysReady: boolean,
  ) {}

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
    const checks = await this.watch.check();
    const failing = Object.keys(checks).filter((name) => checks[name] !== 'ok');
    const status = this.draining ? 'draining' : failing.length === 0 ? 'ok' : this.staysReady ? 'degraded' : 'unavailable';
    const body: ReadinessBody = { service: this.service, status, checks, failing };
    if (status === 'draining' || status === 'unavailable') throw new HttpException(body, HttpStatus.SERVICE_UNAVAILABLE);
    return body;
  }

  beforeApplicationShutdown() {
    this.draining = true;
  }
}
