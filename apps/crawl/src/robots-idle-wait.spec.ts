import type { HostWaiting } from '@crawler/crawl-state';
import { RobotsIdleWait } from './robots-idle-wait';

const host = (name: string): HostWaiting => ({
  host: name,
  since: '2030-01-01T00:00:00.000Z',
  nextTryAt: '2030-01-01T00:01:00.000Z',
  giveUpAt: '2030-01-01T00:30:00.000Z',
  tries: 1,
  status: 500,
});

describe('RobotsIdleWait (CRAWL_ROBOTS_IDLE_WAIT_MS)', () => {
  const setup = (waitMs: number) => {
    const calls: [string[], number][] = [];
    const frontier = { giveUpWaiting: async (hosts: HostWaiting[], waited: number) => void calls.push([hosts.map((h) => h.host), waited]) };
    return { calls, idle: new RobotsIdleWait(frontier, waitMs, { warn() {}, error() {} }) };
  };

  it('gives the waiting hosts up once they have been all the work left for the wait, without a break', async () => {
    const { calls, idle } = setup(1000);
    const waiting = { hosts: [host('a.test'), host('b.test')] };
    idle.tick(waiting, 0);
    idle.tick(waiting, 900);
    // Other work came: the wait starts again.
    idle.tick(undefined, 950);
    idle.tick(waiting, 1000);
    expect(idle.describeGiveUp()).toBe('; the crawl gives them up at 1970-01-01T00:00:02.000Z unless other work comes (CRAWL_ROBOTS_IDLE_WAIT_MS)');
    idle.tick(waiting, 1999);
    expect(calls).toEqual([]);
    idle.tick(waiting, 2000);
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual([[['a.test', 'b.test'], 1000]]);
  });

  it('waits DOWNLOADER_ROBOTS_UNREACHABLE_MAX_MS out at 0', () => {
    const { calls, idle } = setup(0);
    idle.tick({ hosts: [host('a.test')] }, 0);
    idle.tick({ hosts: [host('a.test')] }, 10 ** 9);
    expect(calls).toEqual([]);
    expect(idle.describeGiveUp()).toBe('');
  });
});
