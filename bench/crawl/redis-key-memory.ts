import { addressOf, connectedMastersOf, createRedis } from '@crawler/redis';

/** Keys whose MEMORY USAGE is asked in one pipeline. */
const BATCH = 500;
/** Key families named per master, the largest first: what makes one master heavier than another. */
const FAMILIES = 6;

/** A key's family: its name after the prefix with every number and id replaced (`frontier:{f#}:b:#`). */
function familyOf(key: string, prefix: string): string {
  return key
    .replace(`{${prefix}:`, '{')
    .replace(`${prefix}:`, '')
    .replace(/[A-Za-z0-9_-]{16,}/g, '…')
    .replace(/\d+/g, '#');
}

/**
 * The memory of a run's keys on each master of `url` (MEMORY USAGE, every element counted, over a SCAN of
 * the keys under `prefix:` and `{prefix:`, the hash-tagged ones): the crawl's own share of each master,
 * free of the fixed per-node overhead and of whatever else the server holds.
 */
export async function keyMemoryPerMaster(url: string, prefix: string): Promise<{ address: string; keys: number; bytes: number; largest: Record<string, number> }[]> {
  const client = createRedis(url, { maxRetriesPerRequest: 3 });
  try {
    const masters = await connectedMastersOf(client);
    return await Promise.all(
      masters.map(async (node) => {
        let keys = 0;
        let bytes = 0;
        const families = new Map<string, number>();
        for (const match of [`${prefix}:*`, `{${prefix}:*`]) {
          let cursor = '0';
          do {
            const [next, found] = await node.scan(cursor, 'MATCH', match, 'COUNT', BATCH);
            cursor = next;
            if (!found.length) continue;
            const pipeline = node.pipeline();
            for (const key of found) pipeline.memory('USAGE', key, 'SAMPLES', 0);
            ((await pipeline.exec()) ?? []).forEach(([error, size], i) => {
              if (error) return;
              bytes += Number(size ?? 0);
              const family = familyOf(found[i], prefix);
              families.set(family, (families.get(family) ?? 0) + Number(size ?? 0));
            });
            keys += found.length;
          } while (cursor !== '0');
        }
        const largest = [...families].sort((a, b) => b[1] - a[1]).slice(0, FAMILIES);
        return { address: addressOf(node), keys, bytes, largest: Object.fromEntries(largest) };
      }),
    );
  } finally {
    await client.quit();
  }
}
