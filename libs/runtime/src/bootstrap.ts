import 'reflect-metadata';
import { DynamicModule, Module, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { ConfigError, type CrawlerConfig, loadConfig } from '@crawler/config';
import { createProcessLogger, NestPinoLogger } from '@crawler/logging';
import { ControlApiAccess } from './control-api-access';
import { listenPlan, ListenPlan } from './listen-address';
import { checkRecords } from './records-check';
import { checkRedis } from './redis-policy-check';
import { surviveUnawaitedRedisErrors } from './unawaited-errors';
import { RuntimeModule } from './runtime.module';
import { stopWithin } from './shutdown-deadline';

export interface BootstrapOptions {
  /** The service's routes change the crawl (the control plane): it binds to loopback unless it has a token. */
  controlApi?: boolean;
  /**
   * What the service's own state needs of the infrastructure, checked before it starts: an error names the
   * setting to change, and the process exits 2 as for a bad setting (URL-seen: room for its Bloom filter).
   */
  startChecks?: ((config: CrawlerConfig) => Promise<Error | undefined>)[];
}

/**
 * Starts one service as its own process: validated configuration (a bad value stops the process with a
 * message naming it), the shared runtime, the service's module, /health and /metrics, graceful shutdown.
 */
export async function bootstrapService(service: string, serviceModule: Type<unknown> | DynamicModule, options: BootstrapOptions = {}): Promise<void> {
  let config;
  let listen: ListenPlan;
  try {
    config = loadConfig();
    listen = listenPlan(config, options.controlApi === true);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${service}: ${error.message}\n`);
    process.exit(2);
  }
  if (config.redisUrl) {
    await checkRedis(config.redisUrl, config.redisStartupWaitMs, (error) => {
      process.stderr.write(`${service}: refusing to start: ${error.message}\n`);
      process.exit(2);
    });
  }
  const recordsRefused = await checkRecords(config, (line) => process.stderr.write(`${service}: ${line}\n`));
  if (recordsRefused) {
    process.stderr.write(`${service}: refusing to start: ${recordsRefused.message}\n`);
    process.exit(2);
  }
  for (const check of options.startChecks ?? []) {
    const refused = await check(config);
    if (refused) {
      process.stderr.write(`${service}: refusing to start: ${refused.message}\n`);
      process.exit(2);
    }
  }
  const logger = createProcessLogger({ level: config.logLevel, service });
  @Module({ imports: [RuntimeModule.forRoot({ service, config, logger, staysReady: options.controlApi === true }), serviceModule] })
  class ServiceAppModule {}

  surviveUnawaitedRedisErrors(logger);
  const couldNotStart = (error: unknown): never => {
    // In the log, beside the service's other lines (the exit writes it out), and on stderr for whoever started it.
    logger.fatal({ err: error }, `${service} could not start`);
    process.stderr.write(`${service}: could not start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  };
  // JSON bodies only, up to a named limit: a form or a text/plain body is never even parsed. abortOnError:
  // false, as Nest's process.abort() on a failed start would end the process before its log is written out.
  const app = await NestFactory.create<NestExpressApplication>(ServiceAppModule, {
    logger: new NestPinoLogger(logger),
    bodyParser: false,
    abortOnError: false,
  }).catch(couldNotStart);
  // Nobody learns from a service's answers what it runs on.
  app.disable('x-powered-by');
  // A control API checks who asks before it reads a body: a stranger's bad or oversized body gets a 401.
  if (options.controlApi) app.use(new ControlApiAccess(config).beforeBody());
  app.useBodyParser('json', { limit: config.controlPlane.maxBodyBytes });
  app.use(bodyErrors(config.controlPlane.maxBodyBytes));
  // app.close() runs every shutdown hook (workers finish their jobs, then the stores close); unlike
  // enableShutdownHooks(), which re-raises the signal afterwards, a drained service then exits 0.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      logger.info({ signal }, `${service} stopping`);
      stopWithin({ timeoutMs: config.shutdownTimeoutMs, who: service, exitCode: 1, say: (line) => (logger.error(line), process.stderr.write(`${line}\n`)) });
      app.close().then(
        () => process.exit(0),
        (error) => {
          logger.error({ err: error }, `${service} did not stop cleanly`);
          process.exit(1);
        },
      );
    });
  }
  await app.listen(config.port, listen.address).catch(couldNotStart);
  const address = app.getHttpServer().address();
  if (listen.notice) logger.warn({ address: listen.address }, `${service}: ${listen.notice}`);
  logger.info({ address: listen.address, port: typeof address === 'object' ? address?.port : address }, `${service} ready`);
}

interface BodyError {
  type?: string;
  message?: string;
}
interface JsonResponse {
  status(code: number): { json(body: unknown): unknown };
}

/** The JSON parser's refusals as JSON answers that name the cause (Express would answer with an HTML page). */
function bodyErrors(limit: number) {
  return (error: BodyError, _request: unknown, response: JsonResponse, next: (error?: unknown) => void) => {
    if (error?.type === 'entity.too.large') {
      response.status(413).json({
        statusCode: 413,
        message: `request body larger than CONTROL_PLANE_MAX_BODY_BYTES (${limit} bytes): send it in parts (the CLI splits seed lists itself)`,
      });
    } else if (error?.type === 'entity.parse.failed') {
      response.status(400).json({ statusCode: 400, message: `body is not valid JSON: ${error.message}` });
    } else {
      next(error);
    }
  };
}
