import { RedisStateStore } from '@crawler/state';

export const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

/** Deletes every key of a run: its state and its BullMQ queues share the prefix. */
export async function clearPrefix(prefix: string): Promise<void> {
  const store = new RedisStateStore({ url: REDIS_URL, prefix });
  await store.clear();
  await store.close();
}
