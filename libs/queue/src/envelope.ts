import type { OutageState } from './infrastructure-error';

/**
 * How several messages travel as one BullMQ job. A queue job costs Redis and the consumer far more than a
 * message's own handling (BullMQ on one Redis does a few thousand jobs a second), so messages sent to one
 * queue within a few milliseconds of each other share a job: an envelope. Each message is still validated,
 * handled, retried and dead-lettered on its own; `attempt` counts the envelope's retries (an envelope of
 * retries holds only the messages that failed).
 */
export interface Envelope {
  envelope: 1;
  messages: unknown[];
  /** How many times these messages have failed already. */
  attempt: number;
  /** Why, when the envelope ended in the failed set (its last attempt). */
  errors?: string[];
  /** Set while these messages are retried through an outage (their attempts are not used meanwhile). */
  outage?: OutageState;
}

export function envelope(messages: unknown[], attempt = 0, outage?: OutageState): Envelope {
  return outage ? { envelope: 1, messages, attempt, outage } : { envelope: 1, messages, attempt };
}

/** A job's messages: an envelope's, or the job itself (a job written as one bare message, as before envelopes). */
export function openEnvelope(data: unknown): Envelope {
  const e = data as Partial<Envelope> | null;
  if (e && typeof e === 'object' && e.envelope === 1 && Array.isArray(e.messages)) {
    return envelope(e.messages, Number.isInteger(e.attempt) ? e.attempt! : 0, validOutage(e.outage));
  }
  return envelope([data]);
}

function validOutage(o: unknown): OutageState | undefined {
  const v = o as Partial<OutageState> | undefined;
  return v && Number.isFinite(v.since) && Number.isInteger(v.retry) && typeof v.cause === 'string' ? (v as OutageState) : undefined;
}

/**
 * Messages waiting to be sent to one queue: sent together `lingerMs` after the first, or at once when
 * `maxMessages` are waiting. Each `push` resolves when its envelope is in Redis (or rejects with its error),
 * so a handler that awaits what it sends still completes only after its output is durable.
 */
export class Outbox {
  private messages: unknown[] = [];
  private waiters: { resolve: () => void; reject: (error: unknown) => void }[] = [];
  private timer?: NodeJS.Timeout;
  private sending = new Set<Promise<void>>();

  constructor(
    private readonly send: (messages: unknown[]) => Promise<void>,
    private readonly lingerMs: number,
    private readonly maxMessages: number,
  ) {}

  push(message: unknown): Promise<void> {
    return new Promise((resolve, reject) => {
      this.messages.push(message);
      this.waiters.push({ resolve, reject });
      if (this.messages.length >= this.maxMessages) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.lingerMs);
    });
  }

  /** Sends what is waiting now; resolves once every envelope sent so far is in Redis. */
  async drain(): Promise<void> {
    this.flush();
    await Promise.allSettled([...this.sending]);
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.messages.length === 0) return;
    const messages = this.messages;
    const waiters = this.waiters;
    this.messages = [];
    this.waiters = [];
    const sent = this.send(messages).then(
      () => waiters.forEach((w) => w.resolve()),
      (error) => waiters.forEach((w) => w.reject(error)),
    );
    this.sending.add(sent);
    void sent.finally(() => this.sending.delete(sent));
  }
}

/** At most `permits` tasks at once; the rest wait their turn, in order. */
export class Semaphore {
  private waiting: (() => void)[] = [];
  private running = 0;

  constructor(private readonly permits: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.permits) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
