import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { DeadLetter, PIPELINE_QUEUES, QueueName } from '@crawler/contracts';
import { FailedMessage, QUEUE_TRANSPORT, QueueTransport } from '@crawler/queue';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { STATE_STORE, StateStore } from '@crawler/state';

/** A dead letter as kept for operators: the letter, with its place in the sequence. */
export interface KeptLetter extends DeadLetter {
  seq: number;
}

/** What failed for good in one queue: how many, and the most recent. */
export interface QueueFailures {
  queue: string;
  count: number;
  recent: FailedMessage[];
}

/**
 * Where work that ends dead is seen and sent round again. Malformed messages: the control plane consumes the
 * `dead-letter` queue, counts each letter as `dead-letter.<queue>` and keeps the last KEPT in a ring in the
 * state store (namespace `dead-letters`), for `GET /dead-letters`. They are not replayed: a message that does
 * not match its schema would be refused again. Messages whose handler failed every attempt: the transport
 * keeps them per queue; `failures` lists them, `replay` sends them round again (after the cause is fixed).
 */
@Injectable()
export class DeadLetters implements OnApplicationBootstrap {
  /** Letters kept. */
  static readonly KEPT = 100;
  private readonly store: StateStore;

  constructor(
    private readonly pipeline: Pipeline,
    private readonly stats: CrawlStats,
    @Inject(QUEUE_TRANSPORT) private readonly queues: QueueTransport,
    @Inject(STATE_STORE) state: StateStore,
  ) {
    this.store = state.namespace('dead-letters');
  }

  async onApplicationBootstrap() {
    await this.pipeline.consume(QueueName.DeadLetter, (letter) => this.keep(letter), { concurrency: 8 });
  }

  /** The most recent letters, newest first. */
  async letters(limit = DeadLetters.KEPT): Promise<KeptLetter[]> {
    return Object.values(await this.store.hashGetAll('ring'))
      .map((raw) => JSON.parse(raw) as KeptLetter)
      .sort((a, b) => b.seq - a.seq)
      .slice(0, limit);
  }

  /** Every pipeline queue (or the one named) with failed messages: their number and the most recent. */
  async failures(queue?: string, limit = 20): Promise<QueueFailures[]> {
    const out: QueueFailures[] = [];
    for (const name of this.named(queue)) {
      const count = (await this.queues.counts(name)).failed;
      if (count > 0 || queue) out.push({ queue: name, count, recent: await this.queues.failed(name, limit) });
    }
    return out;
  }

  /** Sends the failed messages of every pipeline queue (or the one named) round again; answers how many, by queue. */
  async replay(queue?: string): Promise<Record<string, number>> {
    const replayed: Record<string, number> = {};
    for (const name of this.named(queue)) {
      const n = await this.queues.replayFailed(name);
      if (n > 0) {
        replayed[name] = n;
        await this.stats.count(`replayed.${name}`, n);
      }
    }
    return replayed;
  }

  private named(queue?: string): QueueName[] {
    if (queue === undefined) return [...PIPELINE_QUEUES];
    if (!(PIPELINE_QUEUES as readonly string[]).includes(queue.split('.')[0])) throw new UnknownQueueError(queue);
    return [queue as QueueName];
  }

  private async keep(letter: DeadLetter): Promise<void> {
    const seq = await this.store.incr('seq');
    await this.store.hashSet('ring', String(seq % DeadLetters.KEPT), JSON.stringify({ ...letter, seq }));
    await this.stats.count(`dead-letter.${letter.queue}`);
  }
}

export class UnknownQueueError extends Error {
  constructor(readonly queue: string) {
    super(`no such queue: ${JSON.stringify(queue)} (the pipeline's are ${PIPELINE_QUEUES.join(', ')}, a downloader's fetch.<id> and a plugin's plugin.<name>)`);
  }
}
