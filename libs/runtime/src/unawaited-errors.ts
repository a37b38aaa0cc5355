import { infrastructureCause } from '@crawler/queue';
import type { Logger } from '@crawler/logging';

let installed = false;

/**
 * Redis clients reject some promises nobody can await (a transaction's queued commands when Redis refuses it
 * with EXECABORT while full, commands cut off by a lost connection). Node ends the process on an unhandled
 * rejection; for these it must not: the work they belonged to is retried as an outage and the health check
 * reports Redis meanwhile. Any other unhandled rejection is still a crash, as Node would make it.
 */
export function surviveUnawaitedRedisErrors(logger: Logger): void {
  if (installed) return;
  installed = true;
  let lastAt = 0;
  process.on('unhandledRejection', (reason) => {
    if (infrastructureCause(reason) !== 'redis') throw reason;
    if (Date.now() - lastAt < 10_000) return;
    lastAt = Date.now();
    logger.warn({ event: 'redis-unawaited-error', err: reason }, 'Redis refused or dropped a command nobody awaited (its work is retried)');
  });
}
