import { Job, Processor, Worker, WorkerOptions } from 'bullmq';

/**
 * BullMQ's worker, taking a job only once the queue's marker says one may be there, and taking nothing when it
 * finishes one.
 *
 * BullMQ's own loop takes (`moveToActive`) whenever a slot is free and the last take found a job, and finishing
 * a job takes the next in the same script (`moveToFinished` with fetch-next). Envelopes arrive a few at a time
 * with the queue empty in between, so both mostly found nothing: 59 Redis commands a job in a queue that empties
 * between jobs. Here the worker always waits on the queue's marker first (BZPOPMIN, one command, answered at
 * once while jobs wait: every add sets it), finishing takes nothing, and the mark BullMQ's take sets again after
 * every job is taken back when the queue is empty (`unmark`, unmark-if-empty.lua): 42. A backlog costs a round
 * trip more a job.
 *
 * The marker wait is BullMQ's own path for a worker it knows drained (its `drained` flag), here held set. BullMQ
 * still wakes every `drainDelay` seconds and takes, so a job whose marker was missed is found.
 */
export class EnvelopeWorker<T = unknown> extends Worker<T> {
  constructor(
    name: string,
    processor: Processor<T>,
    options: WorkerOptions,
    /** Takes the queue's mark back if nothing is waiting (unmark-if-empty.lua, on the queue's keys). */
    private readonly unmark: () => Promise<unknown>,
  ) {
    super(name, processor, options);
    Object.defineProperty(this, 'drained', { get: () => true, set: () => undefined, configurable: true });
  }

  override processJob(job: Job<T>, token: string): ReturnType<Worker<T>['processJob']> {
    return super.processJob(job, token, () => false);
  }

  protected override async moveToActive(token: string, name?: string): Promise<Job<T>> {
    const job = await super.moveToActive(token, name);
    if (job) await this.unmark();
    return job;
  }
}
