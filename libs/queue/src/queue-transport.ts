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

/**
 * The pipeline's message transport. Drivers: BullMQ on Redis (distributed, durable) and in-memory (embedded).
 *
 * Consumers receive validated payloads: a message that fails `decodeJob` goes to the dead-letter queue with
 * its reason and is not retried. A handler that throws is retried with exponential backoff up to the
 * driver's attempt limit, then counted as failed.
 */
export interface QueueTransport {
  add<Q extends QueueName>(queue: Q, payload: JobOf<Q>, options?: JobOptions): Promise<void>;
  addBulk<Q extends QueueName>(queue: Q, jobs: { payload: JobOf<Q>; options?: JobOptions }[]): Promise<void>;
  consume<Q extends QueueName>(queue: Q, handler: JobHandler<Q>, options?: ConsumeOptions): Promise<void>;
  counts(queue: QueueName): Promise<QueueCounts>;
  /**
   * The messages of a queue whose attempts ran out, most recent first (the drivers keep the last 1,000
   * failed jobs of each queue).
   */
  failed(queue: QueueName, limit?: number): Promise<FailedMessage[]>;
  /** Sends a queue's failed messages round again, with fresh attempts; answers how many. */
  replayFailed(queue: QueueName): Promise<number>;
  /** Stops taking new jobs, waits for the running ones, releases connections. */
  close(): Promise<void>;
}

export const QUEUE_TRANSPORT = Symbol('QUEUE_TRANSPORT');
