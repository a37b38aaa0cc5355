import { Redis } from 'ioredis';
import type { RedisFigures } from '../report/results';

/** Redis's own figures over a run: memory (Δ and peak), commands processed, CPU, read from INFO. */
export class RedisMeter {
  private readonly redis: Redis;
  private before?: Record<string, number>;
  private peak = 0;
  private timer?: NodeJS.Timeout;

  constructor(url: string) {
    this.redis = new Redis(url, { maxRetriesPerRequest: 3 });
  }

  async version(): Promise<string> {
    return String((await this.info())['redis_version'] ?? '');
  }

  /** The server's process id (it runs on this machine), to sample its CPU and memory from /proc. */
  async pid(): Promise<number> {
    return Number((await this.info())['process_id']);
  }

  async start(): Promise<void> {
    this.before = await this.info();
    this.peak = this.before.used_memory;
    this.timer = setInterval(() => {
      void this.info().then((i) => (this.peak = Math.max(this.peak, i.used_memory)), () => undefined);
    }, 500);
  }

  async stop(): Promise<RedisFigures> {
    clearInterval(this.timer);
    const after = await this.info();
    const b = this.before!;
    return {
      usedMemoryDelta: after.used_memory - b.used_memory,
      peakUsedMemory: Math.max(this.peak, after.used_memory),
      // INFO itself is a command; the meter's own polls are a few per second, left in.
      commands: after.total_commands_processed - b.total_commands_processed,
      cpuMs: Math.round((after.used_cpu_sys + after.used_cpu_user - b.used_cpu_sys - b.used_cpu_user) * 1000),
    };
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.redis.quit();
  }

  private async info(): Promise<Record<string, number> & { redis_version?: string }> {
    const text = await this.redis.info();
    const out: Record<string, number> = {};
    for (const line of text.split('\r\n')) {
      const [key, value] = line.split(':');
      if (value === undefined) continue;
      const n = Number(value);
      out[key] = Number.isFinite(n) ? n : (value as unknown as number);
    }
    return out;
  }
}
