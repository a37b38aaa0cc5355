import { RedisStateStore } from '@crawler/state';

export const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

/** Deletes every key of a run: its state and its BullMQ queues share the prefix. `url`: a node or a cluster (every master is scanned). */
export async function clearPrefix(prefix: string, url = REDIS_URL): Promise<void> {
  const store = new RedisStateStore({ url, prefix });
  await store.clear();
  await store.close();
}
