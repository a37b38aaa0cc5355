import { Registry } from 'prom-client';
import { loadConfig } from '@crawler/config';
import { MemoryStateStore } from '@crawler/state';
import { URL_SEEN_STATS_MAX_AGE_MS, UrlSeenMetrics } from './url-seen.metrics';
import { UrlSeenService } from './url-seen.service';

const config = (mode: 'bloom' | 'exact') => loadConfig({}, { 'seen.mode': mode, 'seen.expectedUrls': 10_000, 'seen.falsePositiveRate': 0.01 });
const links = (n: number) => Array.from({ length: n }, (_, i) => ({ url: `http://site.test/${i}`, depth: 1, source: 'link' as const, hops: 0 }));
const sample = (text: string, name: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
};

describe('UrlSeenMetrics', () => {
  let now = 1_000_000;
  beforeEach(() => jest.spyOn(Date, 'now').mockImplementation(() => now));
  afterEach(() => jest.restoreAllMocks());

  it('reports a Bloom filter’s URLs, fill ratio and false-positive rate', async () => {
    const seen = new UrlSeenService(new MemoryStateStore(), config('bloom'));
    const registry = new Registry();
    new UrlSeenMetrics(seen, registry);
    await seen.admit(links(500));
    const text = await registry.metrics();
    const stats = await seen.stats();
    if (stats.mode !== 'bloom') throw new Error('not bloom');
    expect(text).toContain('crawler_url_seen_urls{mode="bloom"}');
    expect(sample(text, 'crawler_url_seen_urls')).toBeCloseTo(stats.urls, 6);
    expect(sample(text, 'crawler_url_seen_fill_ratio')).toBeCloseTo(stats.fillRatio, 12);
    expect(sample(text, 'crawler_url_seen_false_positive_rate')).toBeCloseTo(stats.falsePositiveRate, 12);
    expect(sample(text, 'crawler_url_seen_fill_ratio')).toBeGreaterThan(0);
  });

  it('reports the exact set’s size, and no fill ratio', async () => {
    const seen = new UrlSeenService(new MemoryStateStore(), config('exact'));
    const registry = new Registry();
    new UrlSeenMetrics(seen, registry);
    await seen.admit(links(321));
    const text = await registry.metrics();
    expect(text).toContain('crawler_url_seen_urls{mode="exact"} 321');
    expect(sample(text, 'crawler_url_seen_false_positive_rate')).toBe(321 / 2 ** 64);
    expect(text).not.toContain('crawler_url_seen_fill_ratio');
  });

  it('reads the shared state once per 30 s, however many scrapes and gauges', async () => {
    const seen = new UrlSeenService(new MemoryStateStore(), config('bloom'));
    const reads = jest.spyOn(seen, 'stats');
    const registry = new Registry();
    new UrlSeenMetrics(seen, registry);
    await Promise.all([registry.metrics(), registry.metrics()]);
    now += URL_SEEN_STATS_MAX_AGE_MS - 1;
    await seen.admit(links(10));
    expect(sample(await registry.metrics(), 'crawler_url_seen_fill_ratio')).toBe(0);
    expect(reads).toHaveBeenCalledTimes(1);
    now += 1;
    expect(sample(await registry.metrics(), 'crawler_url_seen_fill_ratio')).toBeGreaterThan(0);
    expect(reads).toHaveBeenCalledTimes(2);
  });

  it('fails a scrape whose reading fails, and reads again on the next one', async () => {
    const seen = new UrlSeenService(new MemoryStateStore(), config('exact'));
    const registry = new Registry();
    new UrlSeenMetrics(seen, registry);
    jest.spyOn(seen, 'stats').mockRejectedValueOnce(new Error('connection lost'));
    await expect(registry.metrics()).rejects.toThrow('connection lost');
    expect(await registry.metrics()).toContain('crawler_url_seen_urls{mode="exact"} 0');
  });
});
