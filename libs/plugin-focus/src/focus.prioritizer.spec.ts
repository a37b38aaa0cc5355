import type { CrawlUrl } from '@crawler/contracts';
import { MemoryStateStore } from '@crawler/state';
import { FocusLearner } from './focus-learner';
import { FocusPrioritizer, linkEstimate } from './focus.prioritizer';
import { gradeOf, Relevance } from './focus-relevance';

const link = (url: string, referrer: string): CrawlUrl => ({ url, referrer, depth: 1, source: 'link', hops: 0 });
/** No exploration, and no wait for a page's judgement unless a test marks one. */
const SETTINGS = { epsilon: 0, prior: 0.3, cacheMs: 0, threshold: 0.5, judgeWaitMs: 0 };

describe('the focused crawl', () => {
  it('judges a page relevant from the share of the topic terms it holds, whole words only', () => {
    const relevance = new Relevance(['orchid', 'greenhouse'], 0.5);
    expect(relevance.score('An Orchid in a greenhouse')).toBe(1);
    expect(relevance.relevant('orchid care')).toBe(true);
    expect(relevance.relevant('orchids and greenhouses')).toBe(false);
  });

  it('grades a score by its share of the threshold: a page near the topic counts for part, a relevant one for all', () => {
    expect(gradeOf(1 / 3, 0.5)).toBeCloseTo(2 / 3);
    expect(gradeOf(0.5, 0.5)).toBe(1);
    expect(gradeOf(1, 0.5)).toBe(1);
    expect(gradeOf(0, 0.5)).toBe(0);
  });

  it("estimates a link by the best of its evidence, a new host's first link at the prior", () => {
    expect(linkEstimate({ from: 0.1, sameHost: false, newHost: false }, 0.3)).toBe(0.1);
    expect(linkEstimate({ from: 0.1, to: 0.2, page: 0.6, sameHost: false, newHost: false }, 0.3)).toBe(0.6);
    expect(linkEstimate({ from: 0.1, page: 0, sameHost: false, newHost: true }, 0.3)).toBe(0.3);
    expect(linkEstimate({ from: 0.5, to: 0.9, sameHost: false, newHost: true }, 0.3)).toBe(0.9);
  });

  it("passes a page near the topic on to its links to other sites, not to its own site's (the learner's counts speak for those)", () => {
    expect(linkEstimate({ from: 0.2, page: 2 / 3, sameHost: false, newHost: false }, 0.3)).toBeCloseTo(2 / 3);
    expect(linkEstimate({ from: 0.2, page: 2 / 3, sameHost: true, newHost: false }, 0.3)).toBe(0.2);
    // A relevant page's links all go first, its own site's too.
    expect(linkEstimate({ from: 0.2, page: 1, sameHost: true, newHost: false }, 0.3)).toBe(1);
  });

  it("waits for the page a link was found on to be judged, and ranks the link by that page's graded relevance", async () => {
    const learner = new FocusLearner(new MemoryStateStore(), 100);
    const prioritizer = new FocusPrioritizer(learner, { ...SETTINGS, judgeWaitMs: 5_000 });
    await learner.firstSighting('x.test');
    // Judged while the prioritizer waits, as a page hook does when the links arrive first.
    const judged = new Promise<void>((resolve) =>
      setTimeout(async () => {
        await learner.markJudged('http://a.test/topic', 1);
        await learner.markJudged('http://b.test/near', 1 / 3);
        await learner.markJudged('http://c.test/far', 0);
        resolve();
      }, 50),
    );
    const [topic, near, far] = await prioritizer.prioritize(
      [link('http://x.test/1', 'http://a.test/topic'), link('http://x.test/2', 'http://b.test/near'), link('http://x.test/3', 'http://c.test/far')],
      [7, 7, 7],
      8,
    );
    await judged;
    expect(topic).toBe(1);
    expect(near).toBeLessThan(far);
    expect(far).toBeGreaterThan(3);
  });

  it('scores a link by its places alone when its page is not judged within the wait', async () => {
    const learner = new FocusLearner(new MemoryStateStore(), 100);
    await learner.firstSighting('a.test');
    const prioritizer = new FocusPrioritizer(learner, { ...SETTINGS, judgeWaitMs: 30 });
    const started = Date.now();
    // The prior, from a place nothing is known of: 1 + round(0.7 × 6).
    expect(await prioritizer.prioritize([link('http://a.test/1', 'http://a.test/unjudged')], [7], 8)).toEqual([5]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
  });

  it('tries the first link into a host never met at the prior, and its next links by what is known', async () => {
    const learner = new FocusLearner(new MemoryStateStore(), 100);
    for (let i = 0; i < 10; i++) await learner.record(`http://barren.test/${i}`, 'http://barren.test/', 0);
    const prioritizer = new FocusPrioritizer(learner, SETTINGS);
    const [first, second, home] = await prioritizer.prioritize(
      [link('http://new.test/1', 'http://barren.test/a'), link('http://new.test/2', 'http://barren.test/a'), link('http://barren.test/b', 'http://barren.test/a')],
      [7, 7, 7],
      8,
    );
    expect(first).toBe(5);
    expect(second).toBe(7);
    expect(home).toBe(7);
  });

  it('sends links from places that led to relevant pages ahead of links from places that did not, unknown places between', async () => {
    const state = new MemoryStateStore().namespace('plugin-focus');
    const learner = new FocusLearner(state, 100);
    for (let i = 0; i < 10; i++) {
      await learner.record(`http://x.test/${i}`, 'http://good.test/garden/a', 1);
      await learner.record(`http://y.test/${i}`, 'http://bad.test/news/a', 0);
    }
    const prioritizer = new FocusPrioritizer(learner, SETTINGS);
    const urls = [
      link('http://good.test/garden/c', 'http://good.test/garden/b'),
      link('http://new.test/c', 'http://new.test/'),
      link('http://bad.test/news/c', 'http://bad.test/news/b'),
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
    const prioritizer = new FocusPrioritizer(learner, SETTINGS);
    const [topic, plain] = await prioritizer.prioritize([link('http://n.test/1', 'http://topic.test/b'), link('http://n.test/2', 'http://plain.test/b')], [7, 7], 8);
    expect(topic).toBeLessThan(plain);
  });

  it('ranks a link into a place found relevant by that, wherever it was found', async () => {
    const learner = new FocusLearner(new MemoryStateStore(), 100);
    for (let i = 0; i < 5; i++) await learner.record(`http://topic.test/p/${i}`, undefined, 1);
    for (let i = 0; i < 5; i++) await learner.record(`http://plain.test/p/${i}`, 'http://plain.test/', 0);
    const prioritizer = new FocusPrioritizer(learner, SETTINGS);
    const [into, elsewhere] = await prioritizer.prioritize(
      [link('http://topic.test/p/9', 'http://plain.test/p/1'), link('http://plain.test/q/1', 'http://plain.test/p/1')],
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
    const prioritizer = new FocusPrioritizer(learner, SETTINGS);
    const [near, far] = await prioritizer.prioritize([link('http://t.test/3', 'http://near.test/b'), link('http://t.test/4', 'http://far.test/b')], [7, 7], 8);
    expect(near).toBeLessThan(far);
  });

  it('explores: with epsilon 1 every link gets a random link queue, whatever was learned', async () => {
    const learner = new FocusLearner(new MemoryStateStore(), 100);
    const random = jest.spyOn(Math, 'random').mockReturnValueOnce(0.5).mockReturnValueOnce(0.99);
    try {
      const prioritizer = new FocusPrioritizer(learner, { ...SETTINGS, epsilon: 1 });
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
    // A host first met by a link is not named past the bound either: it is no news to the prioritizer.
    expect(await learner.firstSighting('d.test')).toBe(false);
    expect(await learner.firstSighting('a.test')).toBe(false);
  });
});
