import { Job, JobsOptions, Queue, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { InvalidMessageError, JobOf, QueueName, SCHEMA_VERSION, decodeJob } from '@crawler/contracts';
import { assertJobId } from './job-id';
import type { ConsumeOptions, JobHandler, JobOptions, QueueCounts, QueueTransport } from './queue-transport';

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
}

/** The distributed driver: one BullMQ queue per queue name, all under `prefix`. */
export class BullmqQueueTransport implements QueueTransport {
  private readonly queues = new Map<QueueName, Queue>();
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
    const opts = this.jobOptions(options);
    await this.queue(queue).add(queue, payload, opts);
  }

  async addBulk<Q extends QueueName>(
    queue: Q,
    jobs: { payload: JobOf<Q>; options?: JobOptions }[],
  ): Promise<void> {
    if (jobs.length === 0) return;
    const bulk = jobs.map((job) => ({ name: queue, data: job.payload, opts: this.jobOptions(job.options) }));
    await this.queue(queue).addBulk(bulk);
  }

  async consume<Q extends QueueName>(queue: Q, handler: JobHandler<Q>, options: ConsumeOptions = {}): Promise<void> {
    if (this.closing) throw new Error('queue transport is closed');
    const worker = new Worker(queue, (job: Job) => this.process(queue, job, handler), {
      connection: this.consumerConnection(),
      prefix: this.options.prefix,
      concurrency: options.concurrency ?? 1,
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

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    // Workers first: they finish in-flight jobs, which may still add to the queues closed next.
    await Promise.all(this.workers.map((w) => w.close()));
    this.queuesClosed = true;
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    await Promise.all([this.producer, this.consumer].map((c) => c?.quit()));
  }

  private async process<Q extends QueueName>(queue: Q, job: Job, handler: JobHandler<Q>): Promise<void> {
    let payload;
    try {
      payload = decodeJob(queue, job.data);
    } catch (error) {
      if (!(error instanceof InvalidMessageError)) throw error;
      // A bad dead letter is not dead-lettered again (that would loop): it fails once, kept for inspection.
      if (queue === QueueName.DeadLetter) throw new UnrecoverableError(error.message);
      const at = new Date().toISOString();
      await this.add(QueueName.DeadLetter, { v: SCHEMA_VERSION, queue, reason: error.reason, payload: job.data, at });
      return;
    }
    await handler(payload);
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
