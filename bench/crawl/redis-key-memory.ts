import { addressOf, connectedMastersOf, createRedis } from '@crawler/redis';

/** Keys whose MEMORY USAGE is asked in one pipeline. */
const BATCH = 500;

/**
 * The memory of a run's keys on each master of `url` (MEMORY USAGE, every element counted, over a SCAN of
 * the keys under `prefix:` and `{prefix:`, the hash-tagged ones): the crawl's own share of each master,
 * free of the fixed per-node overhead and of whatever else the server holds.
 */
export async function keyMemoryPerMaster(url: string, prefix: string): Promise<{ address: string; keys: number; bytes: number }[]> {
  const client = createRedis(url, { maxRetriesPerRequest: 3 });
  try {
    const masters = await connectedMastersOf(client);
    return await Promise.all(
      masters.map(async (node) => {
        let keys = 0;
        let bytes = 0;
        for (const match of [`${prefix}:*`, `{${prefix}:*`]) {
          let cursor = '0';
          do {
            const [next, found] = await node.scan(cursor, 'MATCH', match, 'COUNT', BATCH);
            cursor = next;
            if (!found.length) continue;
            const pipeline = node.pipeline();
            for (const key of found) pipeline.memory('USAGE', key, 'SAMPLES', 0);
            for (const [error, size] of (await pipeline.exec()) ?? []) if (!error) bytes += Number(size ?? 0);
            keys += found.length;
          } while (cursor !== '0');
        }
        return { address: addressOf(node), keys, bytes };
      }),
    );
  } finally {
    await client.quit();
  }
}
