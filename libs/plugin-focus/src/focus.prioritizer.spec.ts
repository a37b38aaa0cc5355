import type { CrawlUrl } from '@crawler/contracts';
import { MemoryStateStore } from '@crawler/state';
import { FocusLearner } from './focus-learner';
import { FocusPrioritizer } from './focus.prioritizer';
import { Relevance } from './focus-relevance';

const link = (url: string, referrer: string): CrawlUrl => ({ url, referrer, depth: 1, source: 'link', hops: 0 });

describe('the focused crawl', () => {
  it('judges a page relevant from the share of the topic terms it holds, whole words only', () => {
    const relevance = new Relevance(['orchid', 'greenhouse'], 0.5);
    expect(relevance.score('An Orchid in a greenhouse')).toBe(1);
    expect(relevance.relevant('orchid care')).toBe(true);
    expect(relevance.relevant('orchids and greenhouses')).toBe(false);
  });

  it('sends links from places that led to relevant pages ahead of links from places that did not, unknown places between', async () => {
    const state = new MemoryStateStore().namespace('plugin-focus');
    const learner = new FocusLearner(state, 100);
    for (let i = 0; i < 10; i++) {
      await learner.record(`http://x.test/${i}`, 'http://good.test/garden/a', 1);
      await learner.record(`http://y.test/${i}`, 'http://bad.test/news/a', 0);
    }
    const prioritizer = new FocusPrioritizer(learner, { epsilon: 0, prior: 0.3, cacheMs: 0 });
    const urls = [
      link('http://t1.test/1', 'http://good.test/garden/b'),
      link('http://t2.test/2', 'http://new.test/'),
      link('http://t3.test/3', 'http://bad.test/news/b'),
    ];
    const [good, unknown, bad] = await prioritizer.prioritize(urls, [7, 7, 7], 8);
    expect(good).toBeLessThan(unknown);
    expect(unknown).toBeLessThan(bad);
    expect(good).toBeGreaterThanOrEqual(1);
    // Seeds and URLs without a referrer keep what the chain proposed.
    expect(await prioritizer.prioritize([{ url: 'http://s.test/', depth: 0, source: 'seed', hops: 0 }], [0], 8)).toEqual([0]);
  });

  it('ranks links from a place whose own pages are relevant ahead, before any of its links has led anywhere', async () => {
    const learner = new FocusLearner(new MemoryStateStore(), 100);
    await learner.record('http://topic.test/a', 'http://elsewhere.test/', 1);
    await learner.record('http://plain.test/a', 'http://elsewhere.test/', 0);
    const prioritizer = new FocusPrioritizer(learner, { epsilon: 0, prior: 0.3, cacheMs: 0 });
    const [topic, plain] = await prioritizer.prioritize([link('http://n.test/1', 'http://topic.test/b'), link('http://n.test/2', 'http://plain.test/b')], [7, 7], 8);
    expect(topic).toBeLessThan(plain);
  });

  it('ranks a link into a place found relevant by that, wherever it was found', async () => {
    const learner = new FocusLearner(new MemoryStateStore(), 100);
    for (let i = 0; i < 5; i++) await learner.record(`http://topic.test/p/${i}`, undefined, 1);
    for (let i = 0; i < 5; i++) await learner.record(`http://plain.test/p/${i}`, 'http://plain.test/', 0);
    const prioritizer = new FocusPrioritizer(learner, { epsilon: 0, prior: 0.3, cacheMs: 0 });
    const [into, elsewhere] = await prioritizer.prioritize(
      [link('http://topic.test/p/9', 'http://plain.test/p/1'), link('http://other.test/', 'http://plain.test/p/1')],
      [7, 7],
      8,
    );
    expect(into).toBeLessThanOrEqual(2);
    expect(elsewhere).toBeGreaterThanOrEqual(6);
  });

  it('counts a page by its relevance, so that places near the topic rank above places far from it', async () => {
    const learner = new FocusLearner(new MemoryStateStore(), 100);
    await learner.record('http://t.test/1', 'http://near.test/a', 0.33);
    await learner.record('http://t.test/2', 'http://far.test/a', 0);
    expect(await learner.stats('near.test')).toEqual({ followed: 1, relevant: 0.33, pages: 0, relevantPages: 0 });
    const prioritizer = new FocusPrioritizer(learner, { epsilon: 0, prior: 0.3, cacheMs: 0 });
    const [near, far] = await prioritizer.prioritize([link('http://n1.test/', 'http://near.test/b'), link('http://n2.test/', 'http://far.test/b')], [7, 7], 8);
    expect(near).toBeLessThan(far);
  });

  it('explores: with epsilon 1 every link gets a random link queue, whatever was learned', async () => {
    const learner = new FocusLearner(new MemoryStateStore(), 100);
    const random = jest.spyOn(Math, 'random').mockReturnValueOnce(0.5).mockReturnValueOnce(0.99);
    try {
      const prioritizer = new FocusPrioritizer(learner, { epsilon: 1, prior: 0.3, cacheMs: 0 });
      expect(await prioritizer.prioritize([link('http://x.test/1', 'http://a.test/')], [3], 8)).toEqual([7]);
    } finally {
      random.mockRestore();
    }
  });

  it('learns at most maxPlaces places: past it a new place keeps the prior, and the refusal is reported', async () => {
    const state = new MemoryStateStore();
    const learner = new FocusLearner(state, 2);
    expect(await learner.record('http://a.test/x/1', undefined, 1)).toBe(true);
    expect(await learner.record('http://a.test/x/2', 'http://b.test/x/1', 1)).toBe(false);
    expect(await learner.stats('b.test')).toEqual({ followed: 0, relevant: 0, pages: 0, relevantPages: 0 });
    expect(await learner.stats('a.test')).toEqual({ followed: 0, relevant: 0, pages: 2, relevantPages: 2 });
    expect(await learner.record('http://c.test/', 'http://a.test/x/3', 0)).toBe(false);
    expect(await learner.stats('a.test/x')).toEqual({ followed: 1, relevant: 0, pages: 2, relevantPages: 2 });
  });
});
