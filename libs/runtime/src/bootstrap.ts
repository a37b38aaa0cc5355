import 'reflect-metadata';
import { DynamicModule, Module, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ConfigError, loadConfig } from '@crawler/config';
import { createLogger, NestPinoLogger } from '@crawler/logging';
import { RuntimeModule } from './runtime.module';

/**
 * Starts one service as its own process: validated configuration (a bad value stops the process with a
 * message naming it), the shared runtime, the service's module, /health and /metrics, graceful shutdown.
 */
export async function bootstrapService(service: string, serviceModule: Type<unknown> | DynamicModule): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${service}: ${error.message}\n`);
    process.exit(2);
  }
  @Module({ imports: [RuntimeModule.forRoot({ service, config }), serviceModule] })
  class ServiceAppModule {}

  const logger = createLogger({ level: config.logLevel, service });
  const app = await NestFactory.create(ServiceAppModule, { logger: new NestPinoLogger(logger) });
  // app.close() runs every shutdown hook (workers finish their jobs, then the stores close); unlike
  // enableShutdownHooks(), which re-raises the signal afterwards, a drained service then exits 0.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      logger.info({ signal }, `${service} stopping`);
      app.close().then(
        () => process.exit(0),
        (error) => {
          logger.error({ err: error }, `${service} did not stop cleanly`);
          process.exit(1);
        },
      );
    });
  }
  await app.listen(config.port, '0.0.0.0');
  const address = app.getHttpServer().address();
  logger.info({ port: typeof address === 'object' ? address?.port : address }, `${service} ready`);
}
