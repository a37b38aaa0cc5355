import { MemoryStateStore } from '@crawler/state';
import { RobotsCache } from './robots-cache';
import { RobotsPolicy } from './robots-policy';

describe('RobotsCache', () => {
  const page = 'http://a.test/p/1';
  const policy = () => RobotsPolicy.fromResponse(200, 'User-agent: *\nDisallow: /private', 'http://a.test/robots.txt', 'bot');

  it('answers what this process holds at once (getKnown), and asks the store for the rest (get)', async () => {
    const store = new MemoryStateStore();
    const writer = new RobotsCache(store);
    const reader = new RobotsCache(store);
    expect(writer.getKnown(page)).toBeUndefined();
    await writer.put(page, policy(), 60_000);
    expect(writer.getKnown('http://a.test/other')?.isAllowed('http://a.test/private/x')).toBe(false);
    expect(reader.getKnown(page)).toBeUndefined(); // another process: not held yet
    expect((await reader.get(page))?.isAllowed('http://a.test/ok')).toBe(true);
    expect(reader.getKnown(page)).toBeDefined(); // held since it read it
    expect(reader.getKnown('http://b.test/')).toBeUndefined();
  });

  it('holds a policy no longer than it lives', async () => {
    const cache = new RobotsCache(new MemoryStateStore());
    await cache.put(page, policy(), 1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(cache.getKnown(page)).toBeUndefined();
  });
});
