import { execFile } from 'node:child_process';
import { Client } from 'pg';
import { connectedMastersOf, addressOf, createRedis, type RedisClient } from '@crawler/redis';
import type { RedisMasterReading } from './scale-sample';

/**
 * Redis as a scale run sees it, per master: the server's used_memory, and the run's own keys (SCAN of
 * `prefix:*` and `{prefix:*`, MEMORY USAGE and PTTL pipelined) split into those that expire (bounded by
 * time: batch ids, lease claims, cached robots.txt) and those that do not, which must not grow with the pages.
 * BullMQ's event streams are left out of both: each is trimmed to about 10,000 events, a fixed cost per queue.
 */
export class RedisReadings {
  private readonly client: RedisClient;

  constructor(
    url: string,
    private readonly prefix: string,
  ) {
    this.client = createRedis(url, { maxRetriesPerRequest: 3 });
  }

  async read(): Promise<RedisMasterReading[]> {
    const masters = await connectedMastersOf(this.client);
    return Promise.all(
      masters.map(async (node) => {
        const info = await node.info('memory');
        const reading: RedisMasterReading = {
          address: addressOf(node),
          usedMemoryBytes: Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0),
          lastingKeys: 0,
          lastingBytes: 0,
          expiringKeys: 0,
          expiringBytes: 0,
        };
        for (const match of [`${this.prefix}:*`, `{${this.prefix}:*`]) {
          let cursor = '0';
          do {
            const [next, keys] = await node.scan(cursor, 'MATCH', match, 'COUNT', 1000);
            cursor = next;
            const counted = keys.filter((key) => !key.endsWith(':events'));
            if (!counted.length) continue;
            const pipeline = node.pipeline();
            for (const key of counted) pipeline.memory('USAGE', key, 'SAMPLES', 0).pttl(key);
            const results = (await pipeline.exec()) ?? [];
            counted.forEach((_, i) => {
              const bytes = Number(results[2 * i]?.[1] ?? 0);
              const ttl = Number(results[2 * i + 1]?.[1] ?? -1);
              if (ttl === -2) return; // gone between SCAN and now
              if (ttl > 0) {
                reading.expiringKeys++;
                reading.expiringBytes += bytes;
              } else {
                reading.lastingKeys++;
                reading.lastingBytes += bytes;
              }
            });
          } while (cursor !== '0');
        }
        return reading;
      }),
    );
  }

  /**
   * URLs handed out and not completed: the entries of the frontier's lease hashes (`…frontier…:lease`, one a
   * shard). What a kill may make the crawl fetch twice.
   */
  async leases(): Promise<number> {
    let n = 0;
    for (const node of await connectedMastersOf(this.client)) {
      for (const match of [`${this.prefix}:frontier*lease`, `{${this.prefix}:frontier*lease`]) {
        let cursor = '0';
        do {
          const [next, keys] = await node.scan(cursor, 'MATCH', match, 'COUNT', 1000);
          cursor = next;
          for (const key of keys) n += await node.hlen(key);
        } while (cursor !== '0');
      }
    }
    return n;
  }

  async close(): Promise<void> {
    await this.client.quit();
  }
}

/** pg_database_size of a database, bytes. */
export async function postgresBytes(url: string): Promise<number | null> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    const { rows } = await client.query('SELECT pg_database_size(current_database()) AS bytes');
    return Number(rows[0].bytes);
  } catch {
    return null;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Apparent size of a directory tree, bytes (`du -sb`, in a child process: a million files take it seconds). */
export function directoryBytes(dir: string): Promise<number | null> {
  return new Promise((resolve) => {
    // du exits non-zero when a file vanished under it (the store rewrote it), and still prints the total.
    execFile('du', ['-sb', dir], { maxBuffer: 1 << 20 }, (_error, stdout) => {
      const bytes = Number(/^(\d+)/.exec(stdout ?? '')?.[1]);
      resolve(Number.isFinite(bytes) ? bytes : null);
    });
  });
}
