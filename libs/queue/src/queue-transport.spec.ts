import { Redis } from 'ioredis';
import { BullmqQueueTransport } from './bullmq-queue.driver';
import { MemoryQueueTransport } from './memory-queue.driver';
import { queueTransportContract } from './queue-transport.contract';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
// Small attempts and backoff keep the retry tests in milliseconds.
const retries = { attempts: 2, backoffMs: 20 };

queueTransportContract('memory', async () => new MemoryQueueTransport(retries));

describe('bullmq', () => {
  let prefix = '';
  queueTransportContract(
    'bullmq',
    async () => {
      prefix = `test-${process.pid}-${Math.random().toString(36).slice(2)}`;
      return new BullmqQueueTransport({ connection: REDIS_URL, prefix, ...retries });
    },
    () => deleteKeys(`${prefix}:*`),
  );
});

async function deleteKeys(pattern: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    await redis.quit();
  }
}
