import type { ScaleSample } from '../../bench/scale/scale-sample';
import type { ScaleSampler } from '../../bench/scale/scale-sampler';
import { watchCrawl } from '../../bench/scale/scale-watch';
import type { ScaleWebProcess } from '../../bench/web/scale-web-process';

/** A sampler whose samples say `pages` pages fetched, and a web of 100 reachable pages. */
function fakes() {
  const started = Date.now();
  const samples: ScaleSample[] = [];
  const sampler = {
    samples,
    seconds: () => (Date.now() - started) / 1000,
    sample: async () => {
      const s = { seconds: (Date.now() - started) / 1000, pagesFetched: 10, pagesPerSecond: 1, requests: 10, processes: {}, redis: [] } as unknown as ScaleSample;
      samples.push(s);
      return s;
    },
  } as unknown as ScaleSampler;
  const web = { reachablePages: 100, observe: async () => ({ pagesFetched: 10 }) } as unknown as ScaleWebProcess;
  return { sampler, web };
}

describe('watching a scale crawl', () => {
  it('stops when the run is interrupted, without waiting for the crawl or its time limit, and says it did not end', async () => {
    const { sampler, web } = fakes();
    const stop = new AbortController();
    let asked = 0;
    const watching = watchCrawl(web, sampler, {
      sampleMs: 60_000,
      timeoutMs: 3_600_000,
      log: () => undefined,
      stop: stop.signal,
      ended: async () => {
        asked++;
        return false;
      },
    });
    setTimeout(() => stop.abort(), 1500);
    const started = Date.now();
    await expect(watching).resolves.toEqual({ ended: false });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(asked).toBeGreaterThanOrEqual(1);
    // A last sample is taken on the way out, so the journal ends where the run was stopped.
    expect(sampler.samples.length).toBe(2);
  });
});
