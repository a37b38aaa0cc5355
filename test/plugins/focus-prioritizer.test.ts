import { randomBytes } from 'node:crypto';
import { ConfigError, loadConfig } from '@crawler/config';
import type { CrawlUrl } from '@crawler/contracts';
import { createLogger } from '@crawler/logging';
import { loadPrioritizers } from '@crawler/plugin-sdk';
import { RedisStateStore } from '@crawler/state';
import { clearPrefix, REDIS_URL } from '../support/redis-prefix';

/**
 * The focused crawl's two halves in two processes' shape, on a real Redis: what the page hook learns (in the
 * plugin's state namespace, over one connection) is what the frontier's copy of the prioritizer reads (found
 * by name through the SDK, over another connection).
 */
describe('the focus prioritizer as the frontier loads it', () => {
  const prefix = `i19-focus-${randomBytes(4).toString('hex')}`;
  const logger = createLogger({ level: 'silent', service: 'test' });
  const crawler = loadConfig({ PLUGINS: 'focus' });
  let hook: RedisStateStore;
  let frontier: RedisStateStore;

  beforeAll(() => {
    hook = new RedisStateStore({ url: REDIS_URL, prefix });
    frontier = new RedisStateStore({ url: REDIS_URL, prefix });
  });
  afterAll(async () => {
    await hook.close();
    await frontier.close();
    await clearPrefix(prefix);
  });

  it('orders links by what the page hook learned, read from the shared store', async () => {
    const env = { PLUGIN_FOCUS_TERMS: 'orchid', PLUGIN_FOCUS_EPSILON: '0', PLUGIN_FOCUS_CACHE_MS: '0', PLUGIN_FOCUS_JUDGE_WAIT_MS: '0' };
    const [prioritizer, ...others] = loadPrioritizers(['png', 'in-process', 'focus'], { crawler, state: frontier, logger }, env);
    expect(others).toEqual([]);
    const link = (url: string, referrer: string): CrawlUrl => ({ url, referrer, depth: 3, source: 'link', hops: 0 });
    const urls = [link('http://x.test/1', 'http://garden.test/a'), link('http://x.test/2', 'http://news.test/a')];
    expect(await prioritizer.prioritize(urls, [7, 7], 8)).toEqual([5, 5]);
    // The page hook's learner, as PluginContext.state scopes it: `plugin-focus`.
    const { FocusLearner } = await import('../../libs/plugin-focus/src/focus-learner');
    const learner = new FocusLearner(hook.namespace('plugin-focus'), 1000);
    for (let i = 0; i < 6; i++) {
      await learner.record(`http://y.test/${i}`, 'http://garden.test/b', 1);
      await learner.record(`http://z.test/${i}`, 'http://news.test/b', 0);
    }
    const [garden, news] = await prioritizer.prioritize(urls, [7, 7], 8);
    expect(garden).toBeLessThan(3);
    expect(news).toBe(7);
    // A page the hook judged relevant: its links go first, wherever it is.
    await learner.markJudged('http://news.test/orchids', 1);
    expect(await prioritizer.prioritize([link('http://x.test/3', 'http://news.test/orchids')], [7], 8)).toEqual([1]);
  });

  it('refuses to start a focused crawl without a topic, naming the setting', () => {
    expect(() => loadPrioritizers(['focus'], { crawler, state: frontier, logger }, {})).toThrow(ConfigError);
    expect(() => loadPrioritizers(['focus'], { crawler, state: frontier, logger }, {})).toThrow(/PLUGIN_FOCUS_TERMS/);
    expect(() => loadPrioritizers(['focus'], { crawler, state: frontier, logger }, { PLUGIN_FOCUS_TERMS: 'a', PLUGIN_FOCUS_EPSILON: '2' })).toThrow(
      /PLUGIN_FOCUS_EPSILON/,
    );
  });
});
