import { Controller, Get, HttpException, HttpStatus, Inject } from '@nestjs/common';
import { CONTENT_STORE, ContentStore } from '@crawler/content-store';
import { STATE_STORE, StateStore } from '@crawler/state';
import { SERVICE_NAME } from './runtime.tokens';

/** Liveness and readiness in one: 200 when the state store and the content store answer, 503 otherwise. */
@Controller()
export class HealthController {
  constructor(
    @Inject(SERVICE_NAME) private readonly service: string,
    @Inject(STATE_STORE) private readonly state: StateStore,
    @Inject(CONTENT_STORE) private readonly content: ContentStore,
  ) {}

  @Get('health')
  async health() {
    const checks: Record<string, string> = {};
    await Promise.all([
      this.state.get('health').then(() => (checks.state = 'ok'), (e: Error) => (checks.state = e.message)),
      this.content.ping().then(() => (checks.content = 'ok'), (e: Error) => (checks.content = e.message)),
    ]);
    const healthy = Object.values(checks).every((v) => v === 'ok');
    const body = { service: this.service, status: healthy ? 'ok' : 'unavailable', checks };
    if (!healthy) throw new HttpException(body, HttpStatus.SERVICE_UNAVAILABLE);
    return body;
  }
}
