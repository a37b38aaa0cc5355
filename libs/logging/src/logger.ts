import { mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { LoggerService } from '@nestjs/common';
import pino, { Logger } from 'pino';

export type { Logger } from 'pino';

export interface LoggerOptions {
  level: string;
  /** Service name stamped on every line. */
  service: string;
  /** A file to write to instead of stdout (the embedded run keeps the terminal for its progress bar). */
  file?: string;
}

/** Structured JSON logs: one object a line, with time, level, service and the event's fields. */
export function createLogger(options: LoggerOptions): Logger {
  return pino(pinoOptions(options), openDestination(options.file));
}

/**
 * The root logger of a process: the bootstrap of a service, or of the embedded crawl, builds one and hands it
 * to the RuntimeModule; services and components log on its children. Its destination writes in the
 * background, so the last lines, those that say why the process ended, are still in memory when process.exit()
 * runs (the shutdown deadline, a refused start): they are written out synchronously as the process exits, and
 * an uncaught exception is logged before Node ends the process for it.
 */
export function createProcessLogger(options: LoggerOptions): Logger {
  const destination = openDestination(options.file);
  const logger = pino(pinoOptions(options), destination);
  process.once('exit', () => {
    try {
      destination.flushSync();
    } catch {
      // stdout closed under us (EPIPE): there is nowhere left to write to.
    }
  });
  // A monitor, not a handler: Node still prints the error and ends the process as it would have.
  process.on('uncaughtExceptionMonitor', (err, origin) => logger.fatal({ err, origin }, `${options.service}: uncaught exception: the process ends`));
  return logger;
}

function pinoOptions(options: LoggerOptions) {
  return { level: options.level, base: { service: options.service }, timestamp: pino.stdTimeFunctions.isoTime };
}

function openDestination(file?: string) {
  if (!file) return pino.destination({ dest: 1, sync: false });
  mkdirSync(dirname(file), { recursive: true });
  // Opened now rather than in the background: a process that exits at once can still flush its lines to it.
  return pino.destination({ fd: openSync(file, 'a'), sync: false });
}

/** Routes NestJS's own messages into the same JSON log. */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}
  log(message: unknown, context?: string) {
    this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string) {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string) {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string) {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string) {
    this.logger.trace({ context }, String(message));
  }
}

export const LOGGER = Symbol('LOGGER');
