import { baseQueue, InvalidMessageError, JobOf, QueueName, SCHEMA_VERSION, decodeJob } from '@crawler/contracts';
import { EventLoopSlice } from './event-loop-slice';
import { infrastructureCause, outageDelay, OutageState } from './infrastructure-error';
import { assertJobId } from './job-id';
import type { ConsumeOptions, FailedMessage, JobHandler, JobOptions, OutageRetries, QueueCounts, QueueTransport } from './queue-transport';

/** Failed messages listed by `failed` when no limit is given (all of them are kept, until replayed). */
const FAILED_LISTED = 1000;

export interface MemoryQueueTransportOptions {
  /** Tries per job before it is counted failed. @defaultValue 3 */
  attempts?: number;
  /** Delay before the first retry, doubled on each further retry. @defaultValue 100 */
  backoffMs?: number;
  /** A message failing because S3 (or Redis) is down is retried this long, attempts unused. @defaultValue 600000 */
  outageMaxMs?: number;
  /** The longest wait between two outage retries (from `backoffMs`, doubled each time). @defaultValue 30000 */
  outageBackoffMaxMs?: number;
  /**
   * Check each message against its queue's schema before delivering it (a bad one goes to the dead-letter
   * queue), on a copy taken when it is added. Off, a message is delivered as sent, neither checked nor
   * copied: for producers that are the process's own typed code and treat what they sent as read-only (the
   * embedded crawl, QUEUE_VALIDATE_IN_PROCESS). @defaultValue true
   */
  validate?: boolean;
  /**
   * A producer waits while the queue it sends to holds this many waiting messages: the stages ahead stop
   * outrunning the stages behind (fetched bodies would otherwise pile up in memory). Not for the frontier's
   * own queues, through which every cycle of the pipeline passes, so no chain of waits can close on
   * itself. @defaultValue Infinity
   */
  maxWaiting?: number;
}

/** Queues a producer never waits on (see maxWaiting). */
const NEVER_WAIT = new Set<string>([QueueName.FrontierAdd, QueueName.FrontierDone, QueueName.DeadLetter]);

interface MemoryJob {
  payload: unknown;
  jobId?: string;
  attemptsMade: number;
  /** Set while the job is retried through an outage. */
  outage?: OutageState;
}

interface Consumer {
  handler: JobHandler<QueueName>;
  concurrency: number;
  running: number;
}

/** One queue's state. Every transition below happens synchronously, so counts are exact at any instant. */
class MemoryQueue {
  readonly waiting: MemoryJob[] = [];
  /** Ids of the jobs that exist (waiting, delayed or active): the dedup set. */
  readonly ids = new Set<string>();
  readonly consumers: Consumer[] = [];
  delayed = 0;
  /** Delayed jobs that wait out an outage (a subset of `delayed`). */
  readonly outageDelayed = new Set<MemoryJob>();
  active = 0;
  /** The failed messages, oldest first, every one until replayed (work not done); `failed` counts them. */
  readonly failedMessages: FailedMessage[] = [];
  /** Producers waiting for room (maxWaiting). */
  readonly blocked: (() => void)[] = [];

  release(job: MemoryJob): void {
    if (job.jobId !== undefined) this.ids.delete(job.jobId);
  }
}

/** The embedded driver: in-process FIFO queues with the same delivery, retry and dead-letter rules as BullMQ. */
export class MemoryQueueTransport implements QueueTransport {
  private readonly queues = new Map<QueueName, MemoryQueue>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly running = new Set<Promise<void>>();
  private readonly attempts: number;
  private readonly backoffMs: number;
  private readonly validate: boolean;
  private readonly maxWaiting: number;
  private readonly outageMaxMs: number;
  private readonly outageBackoffMaxMs: number;
  /** No new deliveries; handlers still running may add jobs. */
  private readonly slice = new EventLoopSlice();
  private stopping = false;
  private closed = false;
  private closing?: Promise<void>;

  constructor(options: MemoryQueueTransportOptions = {}) {
    this.attempts = options.attempts ?? 3;
    this.backoffMs = options.backoffMs ?? 100;
    this.validate = options.validate ?? true;
    this.maxWaiting = options.maxWaiting ?? Infinity;
    this.outageMaxMs = options.outageMaxMs ?? 600_000;
    this.outageBackoffMaxMs = options.outageBackoffMaxMs ?? 30_000;
  }

  async add<Q extends QueueName>(queue: Q, payload: JobOf<Q>, options?: JobOptions): Promise<void> {
    assertJobId(options?.jobId);
    await this.room(queue);
    this.enqueue(queue, payload, options);
  }

  async addBulk<Q extends QueueName>(queue: Q, jobs: { payload: JobOf<Q>; options?: JobOptions }[]): Promise<void> {
    // Checked up front so a bad id rejects the whole batch, as BullMQ does.
    for (const job of jobs) assertJobId(job.options?.jobId);
    await this.room(queue);
    for (const job of jobs) this.enqueue(queue, job.payload, job.options);
  }

  async consume<Q extends QueueName>(queue: Q, handler: JobHandler<Q>, options: ConsumeOptions = {}): Promise<void> {
    if (this.stopping) throw new Error('queue transport is closed');
    const concurrency = options.concurrency ?? 1;
    if (!(concurrency >= 1)) throw new Error(`concurrency must be >= 1, got ${concurrency}`);
    const q = this.queue(queue);
    q.consumers.push({ handler: handler as JobHandler<QueueName>, concurrency, running: 0 });
    this.pump(queue, q);
  }

  async counts(queue: QueueName): Promise<QueueCounts> {
    const q = this.queue(queue);
    return { waiting: q.waiting.length, active: q.active, delayed: q.delayed, failed: q.failedMessages.length };
  }

  /** A job of this driver is one message. */
  messages(queue: QueueName): Promise<QueueCounts> {
    return this.counts(queue);
  }

  async failed(queue: QueueName, limit = FAILED_LISTED): Promise<FailedMessage[]> {
    return this.queue(queue).failedMessages.slice(-limit).reverse();
  }

  async outageRetries(queue: QueueName): Promise<OutageRetries | null> {
    const jobs = [...this.queue(queue).outageDelayed];
    if (jobs.length === 0) return null;
    const causes: Record<string, number> = {};
    for (const job of jobs) causes[job.outage!.cause] = (causes[job.outage!.cause] ?? 0) + 1;
    const since = Math.min(...jobs.map((j) => j.outage!.since));
    return { messages: jobs.length, causes, since: new Date(since).toISOString() };
  }

  async replayFailed(queue: QueueName): Promise<number> {
    const failed = this.queue(queue).failedMessages.splice(0);
    for (const message of failed) this.enqueue(queue, message.payload);
    return failed.length;
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.stopping = true;
    for (const q of this.queues.values()) for (const release of q.blocked.splice(0)) release();
    // A settling handler may retry (scheduling a timer), so timers are cleared only once none is running.
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.closed = true;
  }

  /** Resolves once the queue has room (at once for the queues nobody waits on, and while closing). */
  private async room(name: QueueName): Promise<void> {
    const q = this.queue(name);
    while (q.waiting.length >= this.maxWaiting && !NEVER_WAIT.has(baseQueue(name)) && !this.stopping) {
      await new Promise<void>((resolve) => q.blocked.push(resolve));
    }
  }

  private enqueue(name: QueueName, payload: unknown, options: JobOptions = {}): void {
    if (this.closed) throw new Error('queue transport is closed');
    const q = this.queue(name);
    const { jobId, delayMs = 0 } = options;
    if (jobId !== undefined) {
      if (q.ids.has(jobId)) return;
      q.ids.add(jobId);
    }
    const job: MemoryJob = { payload: this.validate ? structuredClone(payload) : payload, jobId, attemptsMade: 0 };
    if (delayMs > 0) this.delay(name, q, job, delayMs);
    else {
      q.waiting.push(job);
      this.pump(name, q);
    }
  }

  private delay(name: QueueName, q: MemoryQueue, job: MemoryJob, ms: number): void {
    q.delayed++;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      q.delayed--;
      q.outageDelayed.delete(job);
      q.waiting.push(job);
      this.pump(name, q);
    }, ms);
    this.timers.add(timer);
  }

  /** Moves waiting jobs to consumers with a free slot. */
  private pump(name: QueueName, q: MemoryQueue): void {
    if (this.stopping) return;
    for (const consumer of q.consumers) {
      while (consumer.running < consumer.concurrency && q.waiting.length > 0) {
        const job = q.waiting.shift()!;
        q.blocked.shift()?.();
        consumer.running++;
        q.active++;
        const run = this.run(name, q, consumer, job);
        this.running.add(run);
        void run.finally(() => this.running.delete(run));
      }
    }
  }

  private async run(name: QueueName, q: MemoryQueue, consumer: Consumer, job: MemoryJob): Promise<void> {
    // Start the handler on a fresh stack (a handler that adds jobs would otherwise recurse through pump()),
    // and within the event loop's slice (a backlog would otherwise run in one turn of the loop).
    await this.slice.next();
    try {
      let payload = job.payload as JobOf<QueueName>;
      try {
        if (this.validate) payload = decodeJob(name, job.payload);
      } catch (error) {
        if (!(error instanceof InvalidMessageError) || name === QueueName.DeadLetter) throw error;
        const letter = { v: SCHEMA_VERSION, queue: name, reason: error.reason, payload: job.payload };
        this.enqueue(QueueName.DeadLetter, { ...letter, at: new Date().toISOString() });
        q.release(job);
        return;
      }
      await consumer.handler(payload);
      q.release(job);
    } catch (error) {
      this.retryOrFail(name, q, job, error);
    } finally {
      consumer.running--;
      q.active--;
      this.pump(name, q);
    }
  }

  private retryOrFail(name: QueueName, q: MemoryQueue, job: MemoryJob, error: unknown): void {
    const cause = name === QueueName.DeadLetter ? null : infrastructureCause(error);
    if (cause) {
      // An outage: waited out with capped backoff, its attempts kept for real failures.
      job.outage = { since: job.outage?.since ?? Date.now(), cause, retry: job.outage ? job.outage.retry + 1 : 0 };
      const wait = outageDelay({ backoffMs: this.backoffMs, maxBackoffMs: this.outageBackoffMaxMs, maxMs: this.outageMaxMs }, job.outage);
      if (wait !== null) {
        q.outageDelayed.add(job);
        this.delay(name, q, job, wait);
        return;
      }
    }
    job.attemptsMade++;
    // Invalid messages are permanent failures; so is a malformed dead letter (dead-lettering it would loop),
    // and an outage that outlasted QUEUE_INFRA_OUTAGE_MAX_MS (the message was tried all along).
    const permanent = error instanceof InvalidMessageError || cause !== null;
    if (!permanent && job.attemptsMade < this.attempts) {
      this.delay(name, q, job, this.backoffMs * 2 ** (job.attemptsMade - 1));
    } else {
      const reason = `${error instanceof Error ? error.message : String(error)}${cause ? ` (${cause} unavailable for longer than ${this.outageMaxMs} ms)` : ''}`;
      q.failedMessages.push({ payload: job.payload, reason, failedAt: new Date().toISOString() });
      q.release(job);
    }
  }

  private queue(name: QueueName): MemoryQueue {
    let q = this.queues.get(name);
    if (!q) {
      q = new MemoryQueue();
      this.queues.set(name, q);
    }
    return q;
  }
}
