import { Job, JobsOptions, Queue, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { InvalidMessageError, JobOf, QueueName, SCHEMA_VERSION, decodeJob } from '@crawler/contracts';
import { envelope, Envelope, openEnvelope, Outbox, Semaphore } from './envelope';
import { assertJobId } from './job-id';
import type { ConsumeOptions, FailedMessage, JobHandler, JobOptions, QueueCounts, QueueTransport } from './queue-transport';

export interface BullmqQueueTransportOptions {
  /** Redis URL, e.g. `redis://127.0.0.1:6379`. */
  connection: string;
  /** Prefix of every queue key (BullMQ's `prefix`): one per deployment, or per test. */
  prefix: string;
  /** Tries per job before it is counted failed. @defaultValue 5 */
  attempts?: number;
  /** Delay before the first retry, doubled on each further retry. @defaultValue 1000 */
  backoffMs?: number;
  /**
   * A job whose worker stops renewing its lock this long (the process died) is handed to another worker;
   * BullMQ looks for such stalled jobs as often. @defaultValue 30000
   */
  stalledMs?: number;
  /** Receives errors no caller awaits (lost connections, worker internals). @defaultValue console.error */
  onError?: (error: Error) => void;
  /** Messages sent to one queue within this long of the first travel as one job (an envelope). @defaultValue 5 */
  batchLingerMs?: number;
  /** Messages in one envelope at most. @defaultValue 100 */
  batchMaxMessages?: number;
}

/**
 * The distributed driver: one BullMQ queue per queue name, all under `prefix`. Messages travel in envelopes
 * (see envelope.ts): a job per few milliseconds of messages to a queue, not per message. A message with a
 * job id or a delay travels alone, since those are properties of a job.
 */
export class BullmqQueueTransport implements QueueTransport {
  private readonly queues = new Map<QueueName, Queue>();
  private readonly outboxes = new Map<QueueName, Outbox>();
  private readonly workers: Worker[] = [];
  private producer?: Redis;
  private consumer?: Redis;
  private closing?: Promise<void>;
  /** Set once the workers are done: until then their handlers may still add jobs. */
  private queuesClosed = false;
  private readonly onError: (error: Error) => void;

  constructor(private readonly options: BullmqQueueTransportOptions) {
    this.onError = options.onError ?? ((error) => console.error('queue transport:', error));
  }

  async add<Q extends QueueName>(queue: Q, payload: JobOf<Q>, options?: JobOptions): Promise<void> {
    if (!needsOwnJob(options)) return this.outbox(queue).push(payload);
    const opts = this.jobOptions(options);
    // What was sent before it goes first: order is kept per producer.
    await this.outboxes.get(queue)?.drain();
    await this.queue(queue).add(queue, envelope([payload]), opts);
  }

  async addBulk<Q extends QueueName>(queue: Q, jobs: { payload: JobOf<Q>; options?: JobOptions }[]): Promise<void> {
    for (const job of jobs) assertJobId(job.options?.jobId);
    // A message with its own job is added once the outbox holds what came before it; the ones after it wait
    // for that, or they could leave in an envelope ahead of it.
    const pushed: Promise<void>[] = [];
    for (const job of jobs) {
      if (needsOwnJob(job.options)) await this.add(queue, job.payload, job.options);
      else pushed.push(this.add(queue, job.payload, job.options));
    }
    await Promise.all(pushed);
  }

  /**
   * `concurrency` messages of the queue are handled at once in this process, from as many envelopes as it
   * takes to keep them busy (a slow message does not hold up the envelopes behind it).
   */
  async consume<Q extends QueueName>(queue: Q, handler: JobHandler<Q>, options: ConsumeOptions = {}): Promise<void> {
    if (this.closing) throw new Error('queue transport is closed');
    const concurrency = options.concurrency ?? 1;
    const slots = new Semaphore(concurrency);
    const worker = new Worker(queue, (job: Job) => this.process(queue, job, handler, slots), {
      connection: this.consumerConnection(),
      prefix: this.options.prefix,
      concurrency: Math.min(concurrency, Math.max(2, Math.ceil(concurrency / 8))),
      lockDuration: this.options.stalledMs ?? 30_000,
      stalledInterval: this.options.stalledMs ?? 30_000,
    });
    // An EventEmitter 'error' without a listener would crash the process.
    worker.on('error', this.onError);
    this.workers.push(worker);
    await worker.waitUntilReady();
  }

  async counts(queue: QueueName): Promise<QueueCounts> {
    // Since BullMQ 5 a paused queue keeps its jobs in `wait`, so 'waiting' covers them; 'paused' is no longer a
    // JobType.
    const c = await this.queue(queue).getJobCounts(
      'waiting',
      'prioritized',
      'waiting-children',
      'active',
      'delayed',
      'failed',
    );
    return {
      waiting: c.waiting + c.prioritized + c['waiting-children'],
      active: c.active,
      delayed: c.delayed,
      failed: c.failed,
    };
  }

  async failed(queue: QueueName, limit = 1000): Promise<FailedMessage[]> {
    const out: FailedMessage[] = [];
    // Most recent first; a job may hold several messages, so jobs are read until `limit` messages.
    for (let start = 0; out.length < limit; start += 100) {
      const jobs = await this.queue(queue).getFailed(start, start + 99);
      for (const job of jobs) {
        const { messages, errors } = openFailed(job);
        const failedAt = new Date(job.finishedOn ?? job.timestamp).toISOString();
        messages.forEach((payload, i) => out.push({ payload, reason: errors[i] ?? job.failedReason ?? '', failedAt }));
      }
      if (jobs.length < 100) break;
    }
    return out.slice(0, limit);
  }

  /** Each failed job's messages go back in a new envelope (attempts from zero), then the job is removed. */
  async replayFailed(queue: QueueName): Promise<number> {
    let replayed = 0;
    for (;;) {
      const jobs = await this.queue(queue).getFailed(0, 99);
      if (jobs.length === 0) return replayed;
      for (const job of jobs) {
        const { messages } = openFailed(job);
        if (messages.length) await this.queue(queue).add(queue, envelope(messages));
        await job.remove();
        replayed += messages.length;
      }
    }
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    // Workers first: they finish in-flight jobs, which may still add to the queues closed next.
    await Promise.all(this.workers.map((w) => w.close()));
    await Promise.all([...this.outboxes.values()].map((o) => o.drain()));
    this.queuesClosed = true;
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    await Promise.all([this.producer, this.consumer].map((c) => c?.quit()));
  }

  /**
   * An envelope's messages, each on its own: a malformed one is dead-lettered, a valid one handled. Messages
   * whose handler threw go back in an envelope of their own after the backoff; once their attempts are used
   * up, this job is kept in BullMQ's failed set holding only them (and why), where it can be retried.
   */
  private async process<Q extends QueueName>(queue: Q, job: Job, handler: JobHandler<Q>, slots: Semaphore): Promise<void> {
    const { messages, attempt } = openEnvelope(job.data);
    const failed: { message: unknown; error: string }[] = [];
    const letters: Promise<void>[] = [];
    await Promise.all(
      messages.map(async (message) => {
        let payload;
        try {
          payload = decodeJob(queue, message);
        } catch (error) {
          if (!(error instanceof InvalidMessageError)) throw error;
          // A bad dead letter is not dead-lettered again (that would loop): it fails at once, kept for inspection.
          if (queue === QueueName.DeadLetter) failed.push({ message, error: error.message });
          else letters.push(this.add(QueueName.DeadLetter, { v: SCHEMA_VERSION, queue, reason: error.reason, payload: message, at: new Date().toISOString() }));
          return;
        }
        await slots.run(() => handler(payload)).catch((error: unknown) => failed.push({ message, error: describe(error) }));
      }),
    );
    await Promise.all(letters);
    if (failed.length === 0) return;
    const attempts = queue === QueueName.DeadLetter ? 1 : (this.options.attempts ?? 5);
    if (attempt + 1 < attempts) {
      const delay = (this.options.backoffMs ?? 1000) * 2 ** attempt;
      await this.queue(queue).add(queue, envelope(failed.map((f) => f.message), attempt + 1), { delay });
      return;
    }
    const kept: Envelope = { ...envelope(failed.map((f) => f.message), attempt + 1), errors: failed.map((f) => f.error) };
    await job.updateData(kept);
    throw new UnrecoverableError(`${failed.length} of ${messages.length} messages failed ${attempt + 1} times; first: ${failed[0].error}`);
  }

  private outbox(queue: QueueName): Outbox {
    let outbox = this.outboxes.get(queue);
    if (!outbox) {
      outbox = new Outbox(
        async (messages) => void (await this.queue(queue).add(queue, envelope(messages))),
        this.options.batchLingerMs ?? 5,
        this.options.batchMaxMessages ?? 100,
      );
      this.outboxes.set(queue, outbox);
    }
    return outbox;
  }

  private jobOptions(options: JobOptions = {}): JobsOptions {
    assertJobId(options.jobId);
    return { jobId: options.jobId, delay: options.delayMs };
  }

  private queue(name: QueueName): Queue {
    if (this.queuesClosed) throw new Error('queue transport is closed');
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, {
        connection: this.producerConnection(),
        prefix: this.options.prefix,
        defaultJobOptions: {
          removeOnComplete: true,
          removeOnFail: { count: 1000 },
          // Handler failures are retried per message (process); these retry a whole envelope whose
          // processing itself failed (Redis gone while its retries or dead letters were being written).
          attempts: this.options.attempts ?? 5,
          backoff: { type: 'exponential', delay: this.options.backoffMs ?? 1000 },
        },
      });
      queue.on('error', this.onError);
      this.queues.set(name, queue);
    }
    return queue;
  }

  /** Shared by all producers; a bounded retry count makes `add` fail fast while Redis is down. */
  private producerConnection(): Redis {
    this.producer ??= this.connect(20);
    return this.producer;
  }

  /** Shared by all workers (each duplicates it for its blocking reads); workers must wait out outages. */
  private consumerConnection(): Redis {
    this.consumer ??= this.connect(null);
    return this.consumer;
  }

  private connect(maxRetriesPerRequest: number | null): Redis {
    const redis = new Redis(this.options.connection, { maxRetriesPerRequest });
    redis.on('error', this.onError);
    return redis;
  }
}

/** A job id or a delay needs a BullMQ job of its own; any other message travels in an outbox envelope. */
function needsOwnJob(options?: JobOptions): boolean {
  return options?.jobId !== undefined || !!options?.delayMs;
}

/** A failed job's messages and, for each, why (an envelope keeps one reason per message). */
function openFailed(job: Job): { messages: unknown[]; errors: string[] } {
  const data = job.data as Partial<Envelope> | null;
  const { messages } = openEnvelope(job.data);
  return { messages, errors: Array.isArray(data?.errors) ? data!.errors : messages.map(() => job.failedReason ?? '') };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
