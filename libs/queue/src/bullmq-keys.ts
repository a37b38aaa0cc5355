import type { QueueName } from '@crawler/contracts';
import { hashTag } from '@crawler/redis';

/**
 * The name BullMQ knows a queue by: the queue's name as a hash tag, `{frontier-add}`. BullMQ's scripts touch
 * many keys of one queue at once (`wait`, `active`, `meta`, the job hashes…), which a Redis Cluster allows only
 * within one slot; the tag puts every key of a queue in the slot of its name, and different queues (a
 * downloader's `fetch.<id>` above all) in different slots, spread over the masters. A single node uses the same
 * layout, so a key is named the same on either.
 */
export function bullmqQueueName(queue: QueueName): string {
  return hashTag(queue);
}

/** What every key of `queue` begins with under `prefix`: `<prefix>:{<queue>}:` (a job's hash adds its id). */
export function bullmqKeyPrefix(prefix: string, queue: QueueName): string {
  return `${prefix}:${bullmqQueueName(queue)}:`;
}
