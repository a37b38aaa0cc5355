import { INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadConfig } from '@crawler/config';
import { PolitenessFloor } from '@crawler/crawl-state';
import { createLogger } from '@crawler/logging';
import { RuntimeModule } from '@crawler/runtime';
import { STATE_STORE, StateStore } from '@crawler/state';
import { FrontierModule } from './frontier.module';

describe('the frontier publishes the politeness floor it holds', () => {
  let app: INestApplicationContext;

  afterAll(() => app?.close());

  it('as it starts, so that a control plane with other settings reports by the frontier’s', async () => {
    const config = loadConfig({ FRONTIER_MIN_DELAY_MS: '1000' }, { logLevel: 'silent' });
    @Module({ imports: [RuntimeModule.forRoot({ service: 'frontier', config, logger: createLogger({ level: 'silent', service: 'frontier' }) }), FrontierModule] })
    class TestModule {}
    app = await NestFactory.createApplicationContext(TestModule, { logger: false });
    const controlPlane = loadConfig({ FRONTIER_MIN_DELAY_MS: '2000', FRONTIER_ALLOW_DELAY_BELOW_MIN: 'true' }, { logLevel: 'silent' });
    expect(await new PolitenessFloor(app.get<StateStore>(STATE_STORE), controlPlane).rule()).toEqual({ minDelayMs: 1000, allowDelayBelowMin: false });
  });
});
