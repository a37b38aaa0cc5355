import { join } from 'node:path';
import { Job, JobsOptions, Queue, UnrecoverableError, Worker } from 'bullmq';
import { LingerBatcher } from '@crawler/batching';
import { InvalidMessageError, JobOf, QueueName, SCHEMA_VERSION, decodeJob } from '@crawler/contracts';
import { createRedis, parseRedisUrl, readLuaScript, type RedisClient, type RedisTarget } from '@crawler/redis';
import { bullmqKeyPrefix, bullmqQueueName } from './bullmq-keys';
import { envelope, Envelope, openEnvelope, Semaphore } from './envelope';
import { ENVELOPE_COUNT_SCRIPT, envelopeName } from './envelope-count';
import { EnvelopeWorker } from './envelope-worker';
import { infrastructureCause, OutageRetryPolicy, outageDelay, OutageState } from './infrastructure-error';
import { assertJobId } from './job-id';
import type { ConsumeOptions, FailedMessage, JobHandler, JobOptions, OutageRetries, QueueCounts, QueueTransport } from './queue-transport';

/** See unmark-if-empty.lua. */
const UNMARK_IF_EMPTY = readLuaScript(join(__dirname, 'unmark-if-empty.lua'));
type UnmarkingClient = { queueUnmarkIfEmpty(wait: string, prioritized: string, marker: string): Promise<number> };

/** Events a queue's stream keeps (approximately): enough to look at by hand, nothing reads them. */
const EVENTS_KEPT = 100;

export interface BullmqQueueTransportOptions {
  /** REDIS_URL: one node, `redis://127.0.0.1:6379`, or a cluster, `redis+cluster://host:port,host:port`. */
  connection: string;
  /**
   * Prefix of every queue key (BullMQ's `prefix`): one per deployment, or per test. A queue's keys follow it with
   * the queue's name as a hash tag, `<prefix>:{<queue>}:wait` (see bullmq-keys.ts).
   */
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
  /**
   * Times a job may stall (its worker died holding it) and still be handed on; one more stall moves it to the
   * failed set. BullMQ's own default, 1, fails a job whose workers die twice, which a crash loop does. @defaultValue 10
   */
  maxStalledCount?: number;
  /**
   * A message failing because Redis, S3 or PostgreSQL is down is retried this long after its first such
   * failure, without using its attempts. @defaultValue 600000
   */
  outageMaxMs?: number;
  /** The longest wait between two outage retries (from `backoffMs`, doubled each time). @defaultValue 30000 */
  outageBackoffMaxMs?: number;
  /** Receives errors no caller awaits (lost connections, worker internals). @defaultValue console.error */
  onError?: (error: Error) => void;
  /** Messages sent to one queue within this long of the first travel as one job (an envelope). @defaultValue 5 */
  batchLingerMs?: number;
  /** `batchLingerMs` of the queues named here, in place of the one above. */
  batchLingerMsByQueue?: Partial<Record<QueueName, number>>;
  /** Messages in one envelope at most. @defaultValue 100 */
  batchMaxMessages?: number;
  /**
   * `messages` reads at most this many jobs of each state and scales up past it (see envelope-count.ts): the
   * bound on what one scrape of a queue's depth costs Redis. @defaultValue 1000
   */
  countMaxJobs?: number;
}

/**
 * The distributed driver: one BullMQ queue per queue name, all under `prefix`, on one Redis node or a Redis
 * Cluster (each queue in its own slot, see bullmq-keys.ts). Messages travel in envelopes
 * (see envelope.ts): a job per few milliseconds of messages to a queue, not per message. A message with a
 * job id or a delay travels alone, since those are properties of a job.
 */
export class BullmqQueueTransport implements QueueTransport {
  private readonly queues = new Map<QueueName, Queue>();
  private readonly outboxes = new Map<QueueName, Outbox>();
  private readonly workers: Worker[] = [];
  private producer?: RedisClient;
  private consumer?: RedisClient;
  private closing?: Promise<void>;
  /** Set once the workers are done: until then their handlers may still add jobs. */
  private queuesClosed = false;
  private readonly onError: (error: Error) => void;
  private readonly target: RedisTarget;

  constructor(private readonly options: BullmqQueueTransportOptions) {
    this.target = parseRedisUrl(options.connection);
    // A tag in the prefix would come first in every key, and so be every queue's: all in one slot.
    if (/[{}]/.test(options.prefix)) throw new Error(`queue prefix ${JSON.stringify(options.prefix)}: no braces (each queue's name is its keys' hash tag)`);
    this.onError = options.onError ?? ((error) => console.error('queue transport:', error));
  }

  async add<Q extends QueueName>(queue: Q, payload: JobOf<Q>, options?: JobOptions): Promise<void> {
    if (!needsOwnJob(options)) return this.outbox(queue).add(payload);
    const opts = this.jobOptions(options);
    // What was sent before it goes first: order is kept per producer.
    await this.outboxes.get(queue)?.flush();
    await this.addEnvelope(queue, envelope([payload]), opts);
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
    const keys = bullmqKeyPrefix(this.options.prefix, queue);
    const consumer = this.consumerConnection();
    const worker = new EnvelopeWorker(
      bullmqQueueName(queue),
      (job: Job) => this.process(queue, job, handler, slots),
      {
        connection: consumer,
        prefix: this.options.prefix,
        concurrency: Math.min(concurrency, Math.max(2, Math.ceil(concurrency / 8))),
        lockDuration: this.options.stalledMs ?? 30_000,
        stalledInterval: this.options.stalledMs ?? 30_000,
        maxStalledCount: this.options.maxStalledCount ?? 10,
      },
      () => (consumer as unknown as UnmarkingClient).queueUnmarkIfEmpty(`${keys}wait`, `${keys}prioritized`, `${keys}marker`),
    );
    // An EventEmitter 'error' without a listener would crash the process.
    worker.on('error', this.onError);
    this.workers.push(worker);
    await worker.waitUntilReady();
  }

  async counts(queue: QueueName): Promise<QueueCounts> {
    // Since BullMQ 5 a paused queue keeps its jobs in `wait`, so 'waiting' covers them; 'paused' is no longer a
    // JobType. No job here has a priority or children ('prioritized', 'waiting-children'): not read, since the
    // control plane counts every queue on each status and sample, a command each.
    const c = await this.queue(queue).getJobCounts('waiting', 'active', 'delayed', 'failed');
    return {
      waiting: c.waiting,
      active: c.active,
      delayed: c.delayed,
      failed: c.failed,
    };
  }

  async messages(queue: QueueName): Promise<QueueCounts> {
    const key = this.queue(queue).toKey('');
    const [waiting, active, delayed, failed] = (await this.producerConnection().eval(ENVELOPE_COUNT_SCRIPT, 1, key, this.options.countMaxJobs ?? 1000)) as number[];
    return { waiting, active, delayed, failed };
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

  async outageRetries(queue: QueueName): Promise<OutageRetries | null> {
    const jobs = await this.queue(queue).getDelayed(0, 199);
    let messages = 0;
    let since = Infinity;
    const causes: Record<string, number> = {};
    for (const job of jobs) {
      const { outage, messages: m } = openEnvelope(job?.data);
      if (!outage) continue;
      messages += m.length;
      causes[outage.cause] = (causes[outage.cause] ?? 0) + m.length;
      since = Math.min(since, outage.since);
    }
    return messages ? { messages, causes, since: new Date(since).toISOString() } : null;
  }

  /** Each failed job's messages go back in a new envelope (attempts from zero), then the job is removed. */
  async replayFailed(queue: QueueName): Promise<number> {
    let replayed = 0;
    for (;;) {
      const jobs = await this.queue(queue).getFailed(0, 99);
      if (jobs.length === 0) return replayed;
      for (const job of jobs) {
        const { messages } = openFailed(job);
        if (messages.length) await this.addEnvelope(queue, envelope(messages));
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
    await Promise.all([...this.outboxes.values()].map((o) => o.flush()));
    this.queuesClosed = true;
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    await Promise.all([this.producer, this.consumer].map((c) => c?.quit()));
  }

  /**
   * An envelope's messages, each on its own: a malformed one is dead-lettered, a valid one handled. Messages
   * whose handler threw go back in an envelope of their own after the backoff; once their attempts are used
   * up, this job is kept in BullMQ's failed set holding only them (and why), where it can be retried.
   * Messages that failed on an outage go back in an envelope of outage retries instead (capped backoff, no
   * attempt used) until the outage has lasted `outageMaxMs`.
   */
  private async process<Q extends QueueName>(queue: Q, job: Job, handler: JobHandler<Q>, slots: Semaphore): Promise<void> {
    const { messages, attempt, outage } = openEnvelope(job.data);
    const failed: { message: unknown; error: string }[] = [];
    const waiting: { message: unknown; error: string; cause: OutageState['cause'] }[] = [];
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
        await slots
          .run(() => handler(payload))
          .catch((error: unknown) => {
            const cause = infrastructureCause(error);
            if (cause && queue !== QueueName.DeadLetter) waiting.push({ message, error: describe(error), cause });
            else failed.push({ message, error: describe(error) });
          });
      }),
    );
    await Promise.all(letters);
    // Messages whose outage outlasted the policy are kept for good at once: they were tried all along.
    const expired: typeof failed = [];
    if (waiting.length) {
      const state: OutageState = { since: outage?.since ?? Date.now(), cause: waiting[0].cause, retry: outage ? outage.retry + 1 : 0 };
      const delay = outageDelay(this.outagePolicy(), state);
      if (delay === null)
        expired.push(
          ...waiting.map(({ message, error }) => ({ message, error: `${error} (${state.cause} unavailable for longer than ${this.outagePolicy().maxMs} ms)` })),
        );
      else
        await this.addEnvelope(
          queue,
          envelope(
            waiting.map((w) => w.message),
            attempt,
            state,
          ),
          { delay },
        );
    }
    const attempts = queue === QueueName.DeadLetter ? 1 : (this.options.attempts ?? 5);
    if (failed.length && attempt + 1 < attempts) {
      const delay = (this.options.backoffMs ?? 1000) * 2 ** attempt;
      await this.addEnvelope(
        queue,
        envelope(
          failed.map((f) => f.message),
          attempt + 1,
        ),
        { delay },
      );
      failed.length = 0;
    }
    const lost = [...failed, ...expired];
    if (lost.length === 0) return;
    const kept: Envelope = {
      ...envelope(
        lost.map((f) => f.message),
        attempt + 1,
      ),
      errors: lost.map((f) => f.error),
    };
    await job.updateData(kept);
    // The job's name counts the messages it was sent with; in the failed set it holds only these.
    await job.updateProgress(lost.length);
    throw new UnrecoverableError(`${lost.length} of ${messages.length} messages failed for good; first: ${lost[0].error}`);
  }

  private outagePolicy(): OutageRetryPolicy {
    return { backoffMs: this.options.backoffMs ?? 1000, maxBackoffMs: this.options.outageBackoffMaxMs ?? 30_000, maxMs: this.options.outageMaxMs ?? 600_000 };
  }

  private outbox(queue: QueueName): Outbox {
    let outbox = this.outboxes.get(queue);
    if (!outbox) {
      outbox = new LingerBatcher((messages) => this.addEnvelope(queue, envelope(messages)), {
        lingerMs: this.options.batchLingerMsByQueue?.[queue] ?? this.options.batchLingerMs ?? 5,
        maxItems: this.options.batchMaxMessages ?? 100,
      });
      this.outboxes.set(queue, outbox);
    }
    return outbox;
  }

  /** Every job is added here: its name carries its message count (see envelope-count.ts). */
  private async addEnvelope(queue: QueueName, data: Envelope, options?: JobsOptions): Promise<void> {
    await this.queue(queue).add(envelopeName(data.messages.length), data, options);
  }

  private jobOptions(options: JobOptions = {}): JobsOptions {
    assertJobId(options.jobId);
    return { jobId: options.jobId, delay: options.delayMs };
  }

  private queue(name: QueueName): Queue {
    if (this.queuesClosed) throw new Error('queue transport is closed');
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(bullmqQueueName(name), {
        connection: this.producerConnection(),
        prefix: this.options.prefix,
        defaultJobOptions: {
          removeOnComplete: true,
          // Every failed job is kept until it is replayed: its messages are work not done, and a capped failed
          // set (BullMQ's count) would drop the oldest of them, lost however soon the cause is fixed.
          removeOnFail: false,
          // Handler failures are retried per message (process); these retry a whole envelope whose
          // processing itself failed (Redis gone while its retries or dead letters were being written).
          attempts: this.options.attempts ?? 5,
          backoff: { type: 'exponential', delay: this.options.backoffMs ?? 1000 },
        },
        // Nothing reads a queue's event stream (no QueueEvents): BullMQ's default keeps its last 10,000
        // events, a few MiB per queue that sit whole on the queue's master.
        streams: { events: { maxLen: EVENTS_KEPT } },
      });
      queue.on('error', this.onError);
      this.queues.set(name, queue);
    }
    return queue;
  }

  /** Shared by all producers; a bounded retry count makes `add` fail fast while Redis is down. */
  private producerConnection(): RedisClient {
    this.producer ??= this.connect(20);
    return this.producer;
  }

  /** Shared by all workers (each duplicates it for its blocking reads); workers must wait out outages. */
  private consumerConnection(): RedisClient {
    this.consumer ??= this.connect(null);
    return this.consumer;
  }

  /**
   * On a cluster the retry count goes to each node's connection, where BullMQ checks a worker's is null. A
   * cluster client skips its ready check: while a master fails over the check fails, and the client reconnects
   * without ever settling the `connect()` BullMQ awaits after its watchdog resets a worker's blocking
   * connection, so the worker would stop taking jobs for good. Commands sent meanwhile wait out CLUSTERDOWN.
   */
  private connect(maxRetriesPerRequest: number | null): RedisClient {
    const redis = createRedis(this.target, { maxRetriesPerRequest, ...(this.target.cluster ? { enableReadyCheck: false } : {}) });
    redis.on('error', this.onError);
    redis.defineCommand('queueUnmarkIfEmpty', { numberOfKeys: 3, lua: UNMARK_IF_EMPTY });
    return redis;
  }
}

/**
 * Messages waiting to be sent to one queue, sent together as one envelope. Each message's promise resolves
 * when its envelope is in Redis (or rejects with its error), so a handler that awaits what it sends still
 * completes only after its output is durable.
 */
type Outbox = LingerBatcher<unknown, void>;

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
