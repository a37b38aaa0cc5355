import { addressOf, connectedMastersOf, createRedis, scanKeys } from '@crawler/redis';

/** The keys under `prefix` on each master of the Redis at `url` (one entry for a node), by master address. */
export async function keysByMaster(url: string, prefix: string): Promise<Map<string, string[]>> {
  const client = createRedis(url);
  try {
    const out = new Map<string, string[]>();
    for (const node of await connectedMastersOf(client)) {
      const keys: string[] = [];
      for await (const batch of scanKeys(node, `${prefix}:*`)) keys.push(...batch);
      out.set(addressOf(node), keys);
    }
    return out;
  } finally {
    client.disconnect();
  }
}
