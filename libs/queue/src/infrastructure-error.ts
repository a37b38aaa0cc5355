/**
 * Tells an outage of the infrastructure a handler depends on (Redis, S3, PostgreSQL) apart from a bug or bad
 * data. The difference decides the retry: a bug fails the same way every time, so a few attempts are enough
 * to keep it for an operator; an outage ends, so the message waits it out (QUEUE_INFRA_OUTAGE_MAX_MS) and
 * nothing is lost to a server being restarted.
 */

/** The dependency an error blames, as the status names it. */
export type InfrastructureCause = 'redis' | 's3' | 'postgresql' | 'network';

/** Node's codes for a connection that could not be made or was cut. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** S3 error codes that say "not now" rather than "never" (HTTP 5xx, throttling). */
const S3_TRANSIENT_CODES = new Set([
  'SlowDown',
  'InternalError',
  'ServiceUnavailable',
  'RequestTimeout',
  'RequestTimeTooSkewed',
  'ThrottlingException',
  'Throttling',
  'OperationAborted',
]);

/**
 * Redis replies that pass: the server is loading, failing over, or full (OOM: intake waits for memory); on a
 * cluster, a slot being moved or failed over (MOVED, ASK: asked again of the node that now holds it). A
 * script's refusal comes inside `ERR Error running script …: -OOM command not allowed …` (Redis 6).
 */
const REDIS_TRANSIENT_REPLY = /^(LOADING|CLUSTERDOWN|TRYAGAIN|MASTERDOWN|READONLY|BUSY |NOREPLICAS|MOVED \d+ |ASK \d+ )|OOM command not allowed/;

/**
 * ioredis's own errors for a connection that is gone or gave up; and a cluster client's, for a cluster it cannot
 * reach, whose slot map it cannot read, or whose slots keep moving while a failover or a resharding settles.
 */
const REDIS_CONNECTION_MESSAGE =
  /^(Connection is closed|Connection lost before the reply|Stream isn't writeable|Reached the max retries per request limit|Command timed out|Failed to refresh slots cache|None of startup nodes is available|Too many Cluster redirections|Cluster isn't ready|Node is disconnected)/;

/**
 * node-postgres's words for a connection that is gone (it gives them no code). The records store names such
 * errors itself (a connection SQLSTATE); these catch a client used outside its pool.
 */
const PG_CONNECTION_MESSAGE =
  /^(Connection terminated unexpectedly|Connection terminated due to connection timeout|Client has encountered a connection error and is not queryable|timeout exceeded when trying to connect)/;

/** A Redis reply refusing a write because memory is full (`OOM command not allowed`, or a transaction aborted by it). */
export function isRedisOutOfMemory(error: unknown): boolean {
  return chain(error).some((e) => /OOM command not allowed/.test(messageOf(e)));
}

/**
 * The dependency to blame when `error` (or any error in its `cause` chain) is an infrastructure outage;
 * null for anything else (a bug, bad data, a permanent refusal such as access denied).
 */
export function infrastructureCause(error: unknown): InfrastructureCause | null {
  for (const e of chain(error)) {
    const message = messageOf(e);
    const code = codeOf(e);
    const name = e instanceof Error ? e.name : '';
    if (REDIS_TRANSIENT_REPLY.test(message) || REDIS_CONNECTION_MESSAGE.test(message) || name === 'MaxRetriesPerRequestError') return 'redis';
    // The content store names itself in its errors; its transient ones come with a network or S3 code.
    if (
      message.startsWith('content store:') &&
      (NETWORK_CODES.has(code) || S3_TRANSIENT_CODES.has(code) || /\((ECONN\w+|ETIMEDOUT|EPIPE|SlowDown|InternalError|ServiceUnavailable)\)/.test(message))
    )
      return 's3';
    if (S3_TRANSIENT_CODES.has(code) || (typeof (e as { amzRequestid?: unknown })?.amzRequestid === 'string' && statusOf(e) >= 500)) return 's3';
    // PostgreSQL SQLSTATE classes 08 (connection) and 57P (operator intervention: shutdown, restart).
    if (/^(08\d{3}|57P0[1-3]|53300)$/.test(code) || PG_CONNECTION_MESSAGE.test(message)) return 'postgresql';
    if (NETWORK_CODES.has(code)) return 'network';
  }
  return null;
}

/** The error and its causes (and an AggregateError's errors), at most a few levels deep. */
function chain(error: unknown): unknown[] {
  const out: unknown[] = [];
  const todo = [error];
  while (todo.length && out.length < 16) {
    const e = todo.shift();
    if (e === undefined || e === null || out.includes(e)) continue;
    out.push(e);
    if (typeof e === 'object') {
      todo.push((e as { cause?: unknown }).cause);
      // AggregateError's errors; ioredis puts the replies that aborted a transaction (EXECABORT) in previousErrors,
      // and a cluster client the error of the last node it tried in lastNodeError.
      for (const key of ['errors', 'previousErrors', 'lastNodeError']) {
        const more = (e as Record<string, unknown>)[key];
        if (Array.isArray(more)) todo.push(...more);
        else if (more) todo.push(more);
      }
    }
  }
  return out;
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : typeof e === 'string' ? e : '';
}

function codeOf(e: unknown): string {
  return typeof e === 'object' && e !== null && 'code' in e ? String((e as { code: unknown }).code) : '';
}

function statusOf(e: unknown): number {
  const status = (e as { statusCode?: unknown; status?: unknown })?.statusCode ?? (e as { status?: unknown })?.status;
  return typeof status === 'number' ? status : 0;
}

/** How a message retried through an outage is scheduled. */
export interface OutageRetryPolicy {
  /** First wait, doubled on each retry. */
  backoffMs: number;
  /** Longest wait between two retries. */
  maxBackoffMs: number;
  /** How long after the first outage failure the message is still retried. */
  maxMs: number;
}

/** Where a message stands in an outage: since when it has failed on it, why, and how many retries so far. */
export interface OutageState {
  since: number;
  cause: InfrastructureCause;
  retry: number;
}

/** The next wait of an outage retry, or null once the outage has lasted longer than the policy allows. */
export function outageDelay(policy: OutageRetryPolicy, state: OutageState, now = Date.now()): number | null {
  if (now - state.since >= policy.maxMs) return null;
  return Math.min(policy.maxBackoffMs, policy.backoffMs * 2 ** Math.min(state.retry, 30));
}
