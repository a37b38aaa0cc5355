import type Redis from 'ioredis';

/** Keys still under `prefix:` (SCAN, so a large Redis is not blocked): a bench checks it left nothing behind. */
export async function countKeys(admin: Redis, prefix: string): Promise<number> {
  let left = 0;
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    left += keys.length;
    cursor = next;
  } while (cursor !== '0');
  return left;
}
