import type Redis from 'ioredis';

/** One section of INFO as its fields (`used_memory`, `redis_version`…). */
export async function redisInfo(redis: Redis, section: string): Promise<Record<string, string>> {
  const text = await redis.info(section);
  return Object.fromEntries(
    text
      .split('\r\n')
      .filter((line) => line.includes(':'))
      .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1)]),
  );
}

/** Redis CPU seconds (user + sys, main thread and all). */
export async function redisCpuSeconds(redis: Redis): Promise<number> {
  const c = await redisInfo(redis, 'cpu');
  return Number(c.used_cpu_user) + Number(c.used_cpu_sys);
}
