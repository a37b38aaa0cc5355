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
  const destination = options.file ? pino.destination({ dest: options.file, mkdir: true, sync: false }) : pino.destination(1);
  return pino({ level: options.level, base: { service: options.service }, timestamp: pino.stdTimeFunctions.isoTime }, destination);
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
