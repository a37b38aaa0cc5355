import type { JobOf, QueueName } from '@crawler/contracts';

export interface JobOptions {
  /** Deduplicates: a job is not added while one with the same id exists. No ':' allowed. */
  jobId?: string;
  /** Run no earlier than this many milliseconds from now. */
  delayMs?: number;
}

export interface QueueCounts {
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
}

export interface ConsumeOptions {
  /** Jobs of this queue processed at once by this process. @defaultValue 1 */
  concurrency?: number;
}

export type JobHandler<Q extends QueueName> = (payload: JobOf<Q>) => Promise<void>;

/** A message whose attempts ran out: kept, with why, until replayed. */
export interface FailedMessage {
  payload: unknown;
  /** The last error of its handler. */
  reason: string;
  /** When it failed for good (ISO 8601). */
  failedAt: string;
}

/** Messages of a queue waiting to be retried after an infrastructure outage (not a bug): they are not lost. */
export interface OutageRetries {
  messages: number;
  /** Messages by the dependency that failed them (`redis`, `s3`, `postgresql`, `network`). */
  causes: Record<string, number>;
  /** When the oldest of them first failed on the outage (ISO 8601). */
  since: string;
}

/**
 * The pipeline's message transport. Drivers: BullMQ on Redis (distributed, durable) and in-memory (embedded).
 *
 * Consumers receive validated payloads: a message that fails `decodeJob` goes to the dead-letter queue with
 * its reason and is not retried. A handler that throws is retried with exponential backoff up to the
 * driver's attempt limit, then counted as failed; one that throws because the infrastructure is down
 * (infrastructure-error.ts) is retried with capped backoff for the outage period instead.
 */
export interface QueueTransport {
  add<Q extends QueueName>(queue: Q, payload: JobOf<Q>, options?: JobOptions): Promise<void>;
  addBulk<Q extends QueueName>(queue: Q, jobs: { payload: JobOf<Q>; options?: JobOptions }[]): Promise<void>;
  consume<Q extends QueueName>(queue: Q, handler: JobHandler<Q>, options?: ConsumeOptions): Promise<void>;
  /** Jobs by state. A job of the BullMQ driver is an envelope of up to 100 messages. */
  counts(queue: QueueName): Promise<QueueCounts>;
  /**
   * Messages by state (pages, URL batches… whatever one message of the queue is): the queue's depth in units
   * of work, which `counts` is not once messages travel in envelopes. Read from the queued jobs themselves,
   * so retries, failures and crashed workers cannot make it drift.
   */
  messages(queue: QueueName): Promise<QueueCounts>;
  /**
   * The messages of a queue whose attempts ran out, most recent first, at most `limit` (1,000 by default).
   * The drivers keep every one of them until it is replayed.
   */
  failed(queue: QueueName, limit?: number): Promise<FailedMessage[]>;
  /**
   * The queue's delayed messages that are retrying after an outage, or null when there are none (the BullMQ
   * driver reads at most the first 200 delayed jobs).
   */
  outageRetries(queue: QueueName): Promise<OutageRetries | null>;
  /** Sends a queue's failed messages round again, with fresh attempts; answers how many. */
  replayFailed(queue: QueueName): Promise<number>;
  /** Stops taking new jobs, waits for the running ones, releases connections. */
  close(): Promise<void>;
}

export const QUEUE_TRANSPORT = Symbol('QUEUE_TRANSPORT');
