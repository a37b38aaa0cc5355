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
