/**
 * Bounds a graceful stop. A process told to stop finishes its work in hand and closes its stores; but a store
 * that stopped answering (a Redis node frozen, a connection wedged) would keep it waiting for ever, and an
 * operator's Ctrl-C would seem to do nothing. Past SHUTDOWN_TIMEOUT_MS, or at a second signal, it exits anyway,
 * saying so; what it had not finished is handed on like the work of a crashed process (queue jobs are
 * redelivered once their lock lapses, leased URLs come back to the frontier).
 */
export function stopWithin(options: { timeoutMs: number; who: string; exitCode: number; say: (line: string) => void }): void {
  const exit = (why: string) => {
    options.say(`${options.who}: ${why}: exiting without a clean stop; unfinished work is handed on as after a crash`);
    process.exit(options.exitCode);
  };
  // unref: a stop that completes in time exits on its own, the timer holding nothing open.
  setTimeout(() => exit(`not stopped within SHUTDOWN_TIMEOUT_MS (${options.timeoutMs} ms)`), options.timeoutMs).unref();
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => exit(`${signal} again while stopping`));
}
