import type { Pool } from 'pg';

/**
 * The records store's own errors, named so that whoever meets one knows what failed: the database being
 * away (an outage, waited out by the queues), or a row that is not what the code expects (bad data, kept
 * for an operator after a few attempts).
 */

/** Node's codes for a connection that could not be made or was cut. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ECONNABORTED']);

/**
 * SQLSTATEs of a server that is away for now: class 08 (connection exception), 57P01-57P03 (shut down by an
 * administrator, crash recovery, not yet accepting connections) and 53300 (too many connections).
 */
const UNAVAILABLE_STATE = /^(08\d{3}|57P0[1-3]|53300)$/;

/**
 * node-postgres's own errors for a connection that is gone: they carry no code. (It reports the server's
 * end of a session, and its own connect timeout, only in words.)
 */
const PG_CONNECTION_MESSAGE =
  /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Client was closed and is not queryable)/;

/** PostgreSQL cannot be reached, or ended the session: retried as an outage (the code is a SQLSTATE of class 08 or 57P). */
export class RecordsUnavailableError extends Error {
  readonly code: string;
  constructor(error: Error & { code?: string }) {
    super(`records store: PostgreSQL unavailable: ${error.message}`, { cause: error });
    this.name = 'RecordsUnavailableError';
    // The server's own SQLSTATE, else 08001 (could not connect) for a refused connection, 08006 (connection failure) for the rest.
    const code = error.code ?? '';
    this.code = UNAVAILABLE_STATE.test(code) ? code : code === 'ECONNREFUSED' ? '08001' : '08006';
  }
}

/** A row read back that is not what the tables' shape promises: names the table, the key, and what is wrong. */
export class RecordsDataError extends Error {
  constructor(table: string, key: string, value: string, problem: string) {
    super(`records store: malformed row in ${table} (${key} = ${JSON.stringify(value)}): ${problem}`);
    this.name = 'RecordsDataError';
  }
}

/** The error means the server is away (not that the statement or its data is wrong). */
export function isRecordsConnectionError(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_STATE.test(code) || NETWORK_CODES.has(code))) return true;
  return typeof message === 'string' && PG_CONNECTION_MESSAGE.test(message);
}

/** The error as the records store throws it: a RecordsUnavailableError when the server is away, else as it is. */
export function recordsError(error: unknown): unknown {
  // Not `instanceof Error`: node's own socket errors may come from another realm (a test sandbox).
  return !(error instanceof RecordsUnavailableError) && isRecordsConnectionError(error) ? new RecordsUnavailableError(error as Error) : error;
}

/**
 * The pool with its `query` and `connect` rejecting with RecordsUnavailableError while the server is away,
 * so that every statement of the store (whichever method sends it) is told apart from a bug by its code.
 * `onAnswer` is called on every statement the server answered.
 */
export function guardPool(pool: Pool, onAnswer: () => void = () => {}): Pool {
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  const connect = pool.connect.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  Object.assign(pool, {
    // The callback forms answer no promise: passed through as they are.
    query: (...args: unknown[]) =>
      typeof args.at(-1) === 'function'
        ? query(...args)
        : query(...args).then(
            (result) => (onAnswer(), result),
            (error: unknown) => Promise.reject(recordsError(error)),
          ),
    connect: (...args: unknown[]) => (args.length ? connect(...args) : connect().catch((error: unknown) => Promise.reject(recordsError(error)))),
  });
  return pool;
}

/** A JSON record read back (the Redis driver's hashes): an object, or a RecordsDataError naming where it was. */
export function jsonRecord<T>(table: string, key: string, value: string, raw: string): T {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw new RecordsDataError(table, key, value, `not JSON (${(error as Error).message}): ${JSON.stringify(raw.slice(0, 80))}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new RecordsDataError(table, key, value, `not a JSON object: ${JSON.stringify(raw.slice(0, 80))}`);
  return parsed as T;
}

/** A time read back: a finite instant, as ISO 8601. (`infinity` comes back as a number, an out-of-range one as an invalid Date.) */
export function isoTime(table: string, key: string, value: string, column: string, time: unknown): string {
  if (!(time instanceof Date) || Number.isNaN(time.getTime())) throw new RecordsDataError(table, key, value, `${column} is ${String(time)}, not a time`);
  return time.toISOString();
}
