import { INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CrawlerConfig, loadConfig } from '@crawler/config';
import { DownloaderMembership } from '@crawler/hash-ring';
import { createLogger } from '@crawler/logging';
import { RuntimeModule } from '@crawler/runtime';
import { STATE_STORE, StateStore } from '@crawler/state';
import { FrontierModule } from './frontier.module';

/**
 * The frontier service in this process (in-memory drivers, no delay) with one downloader on the ring, so the
 * dispatcher has somewhere to send URLs (nothing consumes them). `close` stops the heartbeat and the app.
 */
export async function startFrontierWithOneDownloader(overrides: Record<string, unknown> = {}): Promise<{ app: INestApplicationContext; close: () => Promise<void> }> {
  const app = await startFrontier(loadConfig({}, { logLevel: 'silent', 'frontier.minDelayMs': 0, ...overrides }));
  const membership = new DownloaderMembership(app.get<StateStore>(STATE_STORE).namespace('downloaders'));
  await membership.heartbeat('dl-1');
  const heartbeat = setInterval(() => void membership.heartbeat('dl-1'), 500);
  return {
    app,
    close: async () => {
      clearInterval(heartbeat);
      await app.close();
    },
  };
}

/** The frontier service in this process with the drivers `config` names (memory, or Redis with REDIS_URL), no downloader. */
export async function startFrontier(config: CrawlerConfig): Promise<INestApplicationContext> {
  const logger = createLogger({ level: config.logLevel, service: 'frontier' });
  @Module({ imports: [RuntimeModule.forRoot({ service: 'frontier', config, logger }), FrontierModule] })
  class TestModule {}
  return NestFactory.createApplicationContext(TestModule, { logger: false });
}
