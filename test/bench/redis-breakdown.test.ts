import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { createRedis } from '@crawler/redis';
import { RedisFrontierStore } from '@crawler/frontier-store';
import { CommandAttribution, scriptNames, unescapeMonitor } from '../../bench/crawl/redis-breakdown';
import { RedisMeter } from '../../bench/crawl/redis-meter';
import { ENQUEUE } from '../../libs/frontier-store/src/frontier.lua';
import { REDIS_URL } from '../support/redis-prefix';

const LIBS = join(__dirname, '../../libs');
const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

describe('Redis commands by where they came from', () => {
  const names = scriptNames(LIBS);

  it("names the frontier's scripts (behind their prelude), the state store's and BullMQ's by SHA1", () => {
    expect(names.get(sha1(ENQUEUE))).toBe('frontier-store:enqueue');
    expect([...names.values()]).toEqual(expect.arrayContaining(['state:set-add', 'queue:unmark-if-empty', 'bullmq:addStandardJob', 'bullmq:moveToFinished']));
  });

  it("counts a script's own commands against its call on the same server, and a plain command as itself", () => {
    const attribution = new CommandAttribution(new Map([['abc', 'frontier-store:enqueue']]));
    attribution.see('a:1', ['evalsha', 'abc', '1', 'k'], false);
    attribution.see('b:2', ['get', 'x'], false);
    attribution.see('a:1', ['RPUSH', 'q', 'u'], true);
    attribution.see('a:1', ['ZADD', 'heap', '1', 'j'], true);
    attribution.see('a:1', ['hgetall', 'h'], false);
    attribution.see('b:2', ['evalsha', 'fff0000011', '0'], false);
    attribution.see('b:2', ['SET', 'y', '1'], true);
    expect(attribution.result()).toEqual([
      { where: 'frontier-store:enqueue', calls: 1, commands: 3 },
      { where: 'script fff00000', calls: 1, commands: 2 },
      { where: 'get', calls: 1, commands: 1 },
      { where: 'hgetall', calls: 1, commands: 1 },
    ]);
  });

  it('names a script sent whole (EVAL) by its text as MONITOR quotes it', () => {
    const script = 'local n = redis.call("GET", KEYS[1])\n-- é\treturn n';
    const quoted = 'local n = redis.call(\\"GET\\", KEYS[1])\\n-- \\xc3\\xa9\\treturn n';
    expect(unescapeMonitor(quoted)).toBe(script);
    const attribution = new CommandAttribution(new Map([[sha1(script), 'queue:envelope-count']]));
    attribution.see('a:1', ['eval', quoted, '1', 'k'], false);
    attribution.see('a:1', ['GET', 'k'], true);
    expect(attribution.result()).toEqual([{ where: 'queue:envelope-count', calls: 1, commands: 2 }]);
  });

  it('tells a real run on Redis apart: the frontier enqueue and a BullMQ add, each with the commands it ran', async () => {
    const prefix = `bench-breakdown-${randomBytes(4).toString('hex')}`;
    const meter = new RedisMeter(REDIS_URL, names);
    const store = new RedisFrontierStore(
      { url: REDIS_URL, prefix },
      { frontQueues: 2, backQueues: 4, priorityBias: 2, auditLength: 2, perHostLimit: 1, perIpLimit: 8, perIpIntervalMs: 0 },
    );
    const connection = createRedis(REDIS_URL, { maxRetriesPerRequest: null });
    const queue = new Queue('breakdown', { connection, prefix });
    try {
      // Once before: a script's first call sends its text (EVAL); the crawl's calls are by SHA1.
      await store.enqueue([{ host: 'a.test', priority: 0, item: 'x' }], 1000);
      await queue.add('job', { n: 0 });
      await meter.start();
      await store.enqueue([{ host: 'b.test', priority: 0, item: 'y' }], 1000);
      await queue.add('job', { n: 1 });
      const figures = await meter.stop();
      const enqueue = figures.bySource?.find((s) => s.where === 'frontier-store:enqueue');
      expect(enqueue?.calls).toBe(1);
      expect(enqueue?.commands).toBeGreaterThan(3);
      expect(figures.bySource?.find((s) => s.where === 'bullmq:addStandardJob')?.calls).toBe(1);
    } finally {
      await store.clear();
      await queue.obliterate({ force: true });
      await Promise.all([store.close(), queue.close(), meter.close()]);
      await connection.quit();
    }
  });
});
